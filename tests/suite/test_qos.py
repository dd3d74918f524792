"""Issue 12 items 3-5 on whole runs: host QoS across a cable, the l2mtu rule and a partial NCCL
log on timeout (host PFC against the switch, rx discards: test_matrix.SAYS)."""

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
    # The last line of the log kept so far: nccl-tests' table header, printed before its rows.
    assert "(GB/s)" in message


def test_pfc_on_one_priority_on_both_ends_passes(pytester: pytest.Pytester) -> None:
    faults = [
        {"fault": "host_pfc", "node": "spark-1", "value": 3},
        {"fault": "host_pfc", "node": "spark-2", "value": 3},
    ]
    path = write_cluster(pytester.path, "direct-2.yaml", faults=faults)
    run = run_suite(pytester, path, "-p", "no:html", markers="qos or bandwidth")
    assert not run.failed, run.messages
    measured = run.props["test_host_qos[spark-1]"]["measured"]
    assert measured == "PFC on priority 3, trust pcp (mlnx_qos)"
    mode = run.props["test_rail_counters[spark-2:rail0]"]["mode"]
    assert mode.startswith("lossless (PFC on priority 3")


def test_pfc_on_one_end_of_a_cable_fails_both_ends_with_both_fixes(
    pytester: pytest.Pytester,
) -> None:
    faults = [{"fault": "host_pfc", "node": "spark-2", "value": 3}]
    path = write_cluster(pytester.path, "direct-2.yaml", faults=faults)
    run = run_suite(pytester, path, "-p", "no:html", markers="qos")
    assert run.failed == {"test_host_qos[spark-1]", "test_host_qos[spark-2]"}
    message = run.messages["test_host_qos[spark-2]"]
    assert "spark-2 enp1s0f1np1 (rail0): PFC on priority 3, trust pcp (mlnx_qos)" in message
    assert "on spark-2: `mlnx_qos -i enp1s0f1np1 --pfc 0,0,0,0,0,0,0,0`" in message
    assert "on spark-1: `mlnx_qos -i enp1s0f1np1 --pfc 0,0,0,1,0,0,0,0`" in message
    assert run.props["test_host_qos[spark-2]"]["rule"] == "pfc_mismatch"
