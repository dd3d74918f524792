"""A switch leg at MTU 1500 breaks RDMA, not only pings (issue 14): NCCL's IB transport, run
alone, fails with the sender's completion error and the MTU cause (the RDMA items through such
a leg: test_matrix.SAYS, mixed/switch-three)."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

LEG_1500 = [{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}]


def test_nccl_alone_through_the_short_leg_names_the_mtu(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "demo.yaml", faults=LEG_1500, nodes=3)
    run = run_suite(pytester, path, markers="nccl")
    message = run.messages["test_nccl_completes"]
    assert "IBV_WC_RETRY_EXC_ERR" in message or "network error" in message, message
    assert run.props["test_nccl_completes"].get("rule") == "mtu_path", message
    assert "qsfp56-dd-1-5 mtu 1500" in message
