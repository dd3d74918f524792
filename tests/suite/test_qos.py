"""Issue 12 items 3-5 on whole runs: host QoS read against the switch, lossy-RoCE counters,
the l2mtu rule and a partial NCCL log on timeout."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow


def test_switch_leg_at_mtu_9000_l2mtu_9000_passes(pytester: pytest.Pytester) -> None:
    # RouterOS L2MTU excludes the Ethernet header: l2mtu 9000 carries mtu 9000.
    faults = [{"fault": "mtu", "value": 9000, "switch_port": "qsfp56-dd-1-1"}]
    path = write_cluster(pytester.path, "demo.yaml", faults=faults, nodes=2)
    run = run_suite(pytester, path, "-p", "no:html", markers="mtu or switch")
    assert run.props["test_switch_leg_mtu[spark-1]"]["measured"] == "mtu 9000, l2mtu 9000"
    assert run.outcomes["test_switch_leg_mtu[spark-1]"] == "passed"
    assert not run.failed, run.messages


def test_nccl_timeout_keeps_the_partial_log(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "direct-2.yaml", changes={"nccl": {"timeout_s": 10}})
    run = run_suite(pytester, path, "-p", "no:html", markers="nccl", files=["test_nccl.py"])
    assert run.outcomes["test_nccl_uses_ib[spark-1]"] == "passed"
    assert run.outcomes["test_nccl_uses_ib[spark-2]"] == "passed"
    message = run.messages["test_nccl_completes"]
    assert "did not finish within its deadline (10 s)" in message
    assert "Init COMPLETE" in message  # the last line of the log kept so far
