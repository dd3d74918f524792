"""A node that does not answer: its items fail with its one line, the phases go on without it,
and a phase that cannot run without it fails at once (simulated cluster)."""

from __future__ import annotations

import pytest

from tests.suite.runner import EXAMPLES, SHORT_SOAK, run_measurements, run_suite, write_cluster

pytestmark = pytest.mark.slow

DOWN = "spark-3: ssh: connection timed out after 10 s"


def test_one_node_down_of_four(pytester: pytest.Pytester) -> None:
    path = write_cluster(
        pytester.path,
        "demo.yaml",
        faults=[{"fault": "node_unreachable", "node": "spark-3"}],
        changes=SHORT_SOAK,
    )
    r = run_measurements(pytester, path)
    assert "1 of 4 nodes not reachable; their tests are not measured: " + DOWN in r.stdout
    involving = {k for k in r.outcomes if "spark-3" in k}
    assert involving
    for key in involving:
        assert r.outcomes[key] == "failed", key
        assert r.messages[key] == f"not measured: {DOWN}", (key, r.messages[key])
    # The others are measured as usual, without spark-3 in their rounds.
    for key in (
        "test_pair_rdma[spark-1<->spark-2]",
        "test_pair_tcp[spark-1<->spark-4]",
        "test_nic_loopback[spark-4:rail1]",
        "test_soak_link[spark-1:rail0]",
        "test_soak_load[spark-4]",
    ):
        assert r.outcomes[key] == "passed", (key, r.messages[key])
    # NCCL needs every node: it fails at once, it does not wait for mpirun to give up.
    for key in ("test_nccl_completes", "test_nccl_busbw", "test_nccl_uses_ib[spark-1]"):
        assert r.messages[key] == f"not measured: NCCL needs all 4 nodes; {DOWN}"
    assert "NCCL: all_reduce_perf" not in r.stdout
    # legs: 4 pairs (each node with two ring neighbours), 2 of them with spark-3.
    assert "RDMA bandwidth (legs): 2 node pairs" in r.stdout


def test_progress_counts_what_runs(pytester: pytest.Pytester) -> None:
    r = run_suite(pytester, EXAMPLES / "faults" / "node_unreachable.yaml")
    # The soak needs two nodes that answer: it does not start (its items: test_matrix.SAYS).
    assert "heat soak:" not in r.stdout
    # The phase is still asked for: it says nothing runs, not '0 node pairs' and rounds.
    assert "RDMA bandwidth (legs): no node pair answers at both ends\n" in r.stdout
    assert "0 node pairs" not in r.stdout and "round 1/" not in r.stdout
