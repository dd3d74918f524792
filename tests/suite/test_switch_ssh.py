"""The switch read over SSH (switch.api ssh), REST or auto through the whole suite: every command
sent to the switch a read. Its faults over SSH, judged by the REST pins: test_matrix.OVER_SSH."""

from __future__ import annotations

import json

import pytest

from pytest_sparkfabric.probes.routeros_commands import command_problem
from pytest_sparkfabric.transport.record import SWITCH_RECORDING, SWITCH_SSH_RECORDING
from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow


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
