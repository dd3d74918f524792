"""The switch read over SSH (switch.api ssh) through the whole suite: the same verdicts as over
REST, every command sent to the switch a read, switch counters and CPU caught during traffic."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_sparkfabric.probes.routeros_commands import command_problem
from pytest_sparkfabric.transport.record import SWITCH_RECORDING, SWITCH_SSH_RECORDING
from tests.suite.runner import CONFIG, SuiteRun, run_suite, write_cluster

pytestmark = pytest.mark.slow

TRAFFIC = "switch or bandwidth"
"""The switch's checks and the bandwidth rounds its counters and CPU are watched over."""
SSH = {"switch": {"api": "ssh"}}
FCS = [{"fault": "switch_fcs_errors", "switch_port": "qsfp56-dd-1-5"}]


def _run(
    pytester: pytest.Pytester,
    name: str,
    faults: list[dict[str, Any]] | None,
    changes: dict[str, Any],
    *args: str,
    markers: str = TRAFFIC,
) -> SuiteRun:
    path = write_cluster(
        pytester.path, "demo.yaml", faults=faults, nodes=3, changes=changes, name=name
    )
    return run_suite(pytester, path, *args, markers=markers)


@pytest.mark.parametrize("api", ["rest", "ssh", "auto"])
def test_a_healthy_switch_passes_read_only_whichever_way_it_is_read(
    pytester: pytest.Pytester, api: str
) -> None:
    record = pytester.path / "rec"
    run = _run(pytester, f"{api}.yaml", None, {"switch": {"api": api}}, "--sparkfabric-record",
               str(record))  # fmt: skip
    assert run.ret == 0, {k: run.messages[k] for k in run.not_passed}
    assert run.props["test_switch_cpu_under_traffic"]["measured"].startswith("peak cpu-load ")
    # Every call and command sent to the switch, listed from the recording: reads only.
    sent = {
        name: [json.loads(line)["key"] for line in (record / name).read_text().splitlines()]
        for name in (SWITCH_RECORDING, SWITCH_SSH_RECORDING)
        if (record / name).exists()
    }
    assert list(sent) == [SWITCH_SSH_RECORDING if api == "ssh" else SWITCH_RECORDING]
    for method, path, _ in map(json.loads, sent.get(SWITCH_RECORDING, [])):
        assert method == "GET" or path.endswith(("/print", "/monitor")), path
    commands = sent.get(SWITCH_SSH_RECORDING, [])
    assert not {c: command_problem(c) for c in commands if command_problem(c)}
    if api == "ssh":  # CPU sampled during the rounds, counters before and after each
        assert sum(c == "/system resource print" for c in commands) >= 6
        assert any(c.startswith("/interface ethernet print stats") for c in commands)
    if api == "auto":
        props = run.props["test_switch_resource"]
        assert props["api"] == "REST API (switch.api auto: REST answered)"
        assert props["measured"].endswith(
            ", read over the REST API (switch.api auto: REST answered)"
        )


@pytest.mark.parametrize(
    "faults",
    [
        [{"fault": "autoneg_failed", "switch_port": "qsfp56-dd-1-5"}],
        [{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}],
        [{"fault": "switch_cpu_forwarding"}],
        [{"fault": "pfc_stall", "node": "spark-2"}],
        FCS,
    ],
    ids=["autoneg_failed", "mtu_switch_port", "switch_cpu_forwarding", "pfc_stall", "fcs"],
)
def test_each_switch_fault_fails_the_same_over_ssh_as_over_rest(
    pytester: pytest.Pytester, faults: list[dict[str, Any]]
) -> None:
    rest = _run(pytester, "rest.yaml", faults, {}, markers=CONFIG + " or bandwidth")
    ssh = _run(pytester, "ssh.yaml", faults, SSH, markers=CONFIG + " or bandwidth")
    assert rest.failed and ssh.failed == rest.failed
    for item in rest.failed:
        assert ssh.props[item].get("rule") == rest.props[item].get("rule"), item
        if "switch" in item and "[" in item:
            leg_node = item[item.index("[") + 1 : -1]
            assert ssh.messages[item].startswith(leg_node), ssh.messages[item]


def test_growing_fcs_errors_are_blamed_on_the_cable_with_switch_side_evidence(
    pytester: pytest.Pytester,
) -> None:
    run = _run(pytester, "fcs.yaml", FCS, SSH)
    assert run.failed == {"test_switch_leg_counters[spark-2]"}, run.failed
    message = run.messages["test_switch_leg_counters[spark-2]"]
    props = run.props["test_switch_leg_counters[spark-2]"]
    assert message.startswith("spark-2: switch 192.168.88.1 port qsfp56-dd-1-5: rx-fcs-error +")
    assert "RDMA round" in message and "rs-fec-uncorrected +" in message
    assert "Blamed on: the host->switch direction of the cable spark-2 port 1 <-> switch" in message
    assert props["rule"] == "post_fec_errors" and props["direction"] == "host->switch"
    assert props["cable"] == "spark-2 port 1 <-> switch 192.168.88.1 qsfp56-dd-1-5"
    assert props["counter"] == "rx-fcs-error" and props["switch_leg"] == "qsfp56-dd-1-5"


def test_cpu_forwarding_is_caught_from_a_sample_during_traffic(pytester: pytest.Pytester) -> None:
    run = _run(pytester, "cpu.yaml", [{"fault": "switch_cpu_forwarding"}], SSH)
    message = run.messages["test_switch_cpu_under_traffic"]
    assert run.outcomes["test_switch_cpu_under_traffic"] == "failed"
    # The busiest sample names its round (the TCP rounds run too: they tell the cause of the
    # slow RDMA items) and when in it it was taken.
    assert re.search(
        r" during (RDMA|TCP) round \d+ \(\d+ s in\) while fabric traffic crossed", message
    )
    assert "hw-offload off on: qsfp56-dd-1-1" in message and "qsfp56-dd-1-2" in message
    assert run.props["test_switch_cpu_under_traffic"]["rule"] == "switch_cpu_forwarding"
    # The one read before any traffic saw an idle CPU: only the samples during it tell.
    assert int(run.props["test_switch_resource"]["cpu_load_pct"]) < 50
