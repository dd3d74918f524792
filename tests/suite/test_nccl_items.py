"""The NCCL job is the cluster's: its items sit on the cluster object, not on the host where
mpirun started, nor on a node named after the rank count (issue 26 item 4)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric import objects
from tests.suite.runner import run_suite, write_cluster


def test_nccl_job_items_are_on_the_cluster_and_rank_items_on_their_node(
    pytester: pytest.Pytester,
) -> None:
    path = write_cluster(pytester.path, "demo.yaml", changes={"nccl": {"launch_node": "spark-4"}})
    doc = run_suite(pytester, path, markers="nccl").doc
    where = {i["id"].rpartition("::")[2]: (i["node"], i["objects"]) for i in doc["items"]}
    for job in ("test_nccl_completes", "test_nccl_busbw"):
        assert where[job] == (None, [objects.CLUSTER.id]), where[job]
    for n in range(1, 5):
        assert where[f"test_nccl_uses_ib[spark-{n}]"] == (f"spark-{n}", [f"spark-{n}"])
