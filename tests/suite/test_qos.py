"""Issue 12 items 3-5 on whole runs: host QoS read against the switch, lossy-RoCE counters,
the l2mtu rule and a partial NCCL log on timeout."""

from __future__ import annotations

import pytest

from tests.suite.runner import EXAMPLES, run_suite, write_cluster

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


def test_host_pfc_against_a_switch_with_pfc_off_names_both_fixes(
    pytester: pytest.Pytester,
) -> None:
    run = run_suite(
        pytester, EXAMPLES / "faults" / "host_pfc.yaml", "-p", "no:html", markers="qos or switch"
    )
    assert run.failed == {"test_switch_qos[spark-2]"}
    message = run.messages["test_switch_qos[spark-2]"]
    assert "pfc disabled while spark-2 runs PFC on priority 3" in message
    assert "--pfc 0,0,0,0,0,0,0,0" in message and "a PFC profile for priority 3" in message


def test_rx_discards_fail_the_rails_that_drop_naming_the_counter(
    pytester: pytest.Pytester,
) -> None:
    run = run_suite(
        pytester, EXAMPLES / "faults" / "rx_discards.yaml", "-p", "no:html", markers="bandwidth"
    )
    assert run.failed == {
        "test_rail_counters[spark-2:rail0]",
        "test_rail_counters[spark-2:rail1]",
    }
    message = run.messages["test_rail_counters[spark-2:rail1]"]
    assert "rx_discards_phy +" in message and "expected <= 0.1%" in message
    assert "during RDMA round 1/2" in message  # directions apart: a->b, then b->a
