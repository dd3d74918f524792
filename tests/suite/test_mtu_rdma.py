"""A switch leg at MTU 1500 breaks RDMA, not only pings (issue 14): RoCE frames of the negotiated
4096-byte RDMA MTU do not fit through it, RC retries run out, and every RDMA item on a path
through that leg fails with the MTU cause; items between other nodes pass."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

LEG_1500 = [{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}]


def test_switch_leg_at_1500_fails_rdma_with_the_mtu_cause(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "demo.yaml", faults=LEG_1500, nodes=3)
    run = run_suite(pytester, path, markers="bandwidth or nccl")
    # ib_write_lat's 2-byte packets fit any MTU: the latency items are not MTU evidence.
    rdma = {k for k in run.outcomes if k.startswith("test_pair_rdma[")}
    through = {k for k in rdma if "spark-2" in k}
    assert through and rdma - through
    assert through <= run.failed, {k: run.messages[k] for k in rdma}
    assert not (rdma - through) & run.failed
    for item in through:
        assert run.props[item].get("rule") == "mtu_path", (item, run.messages[item])
        message = run.messages[item]
        assert "transport retry counter exceeded (12)" in message, message
        assert "qsfp56-dd-1-5 mtu 1500 l2mtu 1500, below the 4156-byte RoCE packet" in message
    # NCCL's IB transport meets the same drop: the run fails with the sender's completion error.
    assert "test_nccl_completes" in run.failed
    nccl = run.messages["test_nccl_completes"]
    assert "IBV_WC_RETRY_EXC_ERR" in nccl or "network error" in nccl, nccl
    assert run.props["test_nccl_completes"].get("rule") == "mtu_path", nccl


def test_nccl_alone_through_the_short_leg_names_the_mtu(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "demo.yaml", faults=LEG_1500, nodes=3)
    run = run_suite(pytester, path, markers="nccl")
    message = run.messages["test_nccl_completes"]
    assert "IBV_WC_RETRY_EXC_ERR" in message or "network error" in message, message
    assert run.props["test_nccl_completes"].get("rule") == "mtu_path", message
    assert "qsfp56-dd-1-5 mtu 1500" in message
