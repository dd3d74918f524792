"""A recorded run: every command sent to the switch a read, whichever way it is read (switch.api
ssh, rest or auto; its faults over SSH, judged by the REST pins: test_matrix.OVER_SSH), and the
recording replays to the same verdicts (hosts and switch, over REST and over SSH)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from pytest_sparkfabric.probes.routeros_commands import command_problem
from pytest_sparkfabric.transport.record import SWITCH_RECORDING, SWITCH_SSH_RECORDING
from tests.suite.runner import CONFIG, run_suite, write_cluster

pytestmark = pytest.mark.slow

MTU = [{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}]
FCS = [{"fault": "switch_fcs_errors", "switch_port": "qsfp56-dd-1-5"}]


@pytest.mark.parametrize(
    ("changes", "faults", "markers", "switch_file"),
    [
        ({}, MTU, CONFIG, SWITCH_RECORDING),
        ({"switch": {"api": "ssh"}}, FCS, "switch or bandwidth", SWITCH_SSH_RECORDING),
    ],
    ids=["rest", "ssh"],
)
def test_replay_gives_the_same_verdicts(
    pytester: pytest.Pytester,
    changes: dict[str, Any],
    faults: list[dict[str, Any]],
    markers: str,
    switch_file: str,
) -> None:
    live = write_cluster(pytester.path, "demo.yaml", nodes=3, faults=faults, changes=changes)
    record = pytester.path / "recording"
    first = run_suite(pytester, live, "--sparkfabric-record", str(record), markers=markers)
    assert first.failed  # a run with failures and diagnoses, not only passes
    assert (record / "spark-1.jsonl").is_file() and (record / switch_file).is_file()

    data = yaml.safe_load(live.read_text())
    data.pop("simulate")
    data.update(transport="replay", replay_dir="recording")
    replay = pytester.path / "replay.yaml"
    replay.write_text(yaml.safe_dump(data, sort_keys=False))
    second = run_suite(pytester, replay, markers=markers)
    assert (second.outcomes, second.props, second.messages) == (
        first.outcomes, first.props, first.messages
    )  # fmt: skip


@pytest.mark.parametrize("api", ["rest", "ssh", "auto"])
def test_a_healthy_switch_passes_read_only_whichever_way_it_is_read(
    pytester: pytest.Pytester, api: str
) -> None:
    record = pytester.path / "rec"
    path = write_cluster(pytester.path, "demo.yaml", nodes=3, changes={"switch": {"api": api}})
    # The switch's checks and the bandwidth rounds its counters and CPU are watched over.
    run = run_suite(
        pytester, path, "--sparkfabric-record", str(record), markers="switch or bandwidth"
    )
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
