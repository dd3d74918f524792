"""The launch environment (NCCL_SOCKET_IFNAME, Open MPI interface lists) and the version table,
measured on the simulated cluster."""

from __future__ import annotations

from pytest_sparkfabric.cluster import Cluster, parse_cluster
from pytest_sparkfabric.measure import facts, nccl_run
from tests.measure.onsim import sim_fabric
from tests.sim.conftest import EXAMPLES, example


def _ring_with_env(env: str) -> Cluster:
    text = (EXAMPLES / "ring-4.yaml").read_text()
    text = text.replace("    NCCL_DEBUG: INFO\n", f"    NCCL_DEBUG: INFO\n{env}")
    return parse_cluster(text, source="ring-4+env")


def test_unset_bootstraps_over_the_management_port_and_is_fine() -> None:
    fabric = sim_fabric(example("ring-4"))
    choice = nccl_run.socket_choice(fabric, "spark-1")
    assert choice is not None and choice.selected[0] == "enP7s7"
    assert choice.setting == "NCCL_SOCKET_IFNAME unset"
    assert nccl_run.problems(fabric, "spark-1") == []


def test_a_ring_fabric_netdev_does_not_reach_the_far_nodes() -> None:
    fabric = sim_fabric(_ring_with_env("    NCCL_SOCKET_IFNAME: enp1s0f1np1\n"))
    found = nccl_run.problems(fabric, "spark-1")
    assert len(found) == 1
    assert "bootstraps over the fabric netdev enp1s0f1np1 (192.168.106.11/24)" in found[0]
    # Each node's port-1 netdev sits on another cable's subnet: no other node's is in reach.
    assert found[0].endswith(
        "which spark-2 (192.168.100.12), spark-3 (192.168.102.13), spark-4 (192.168.104.14) "
        "cannot reach"
    )


def test_an_ompi_interface_that_does_not_exist() -> None:
    fabric = sim_fabric(_ring_with_env("    OMPI_MCA_btl_tcp_if_include: eth1\n"))
    assert nccl_run.problems(fabric, "spark-3") == [
        "OMPI_MCA_btl_tcp_if_include=eth1 (cluster.yaml nccl.env): no interface eth1"
    ]


def test_with_a_tie_the_first_nodes_value_is_the_one_the_others_differ_from() -> None:
    # One odd node named by its firmware: the matrix's faults/firmware_mismatch (SAYS).
    assert facts.odd_ones({"a": "1", "b": "2"}) == {"b": "2"}
    assert facts.odd_ones({"a": "1", "b": "2", "c": "2"}) == {"a": "1"}


def test_the_version_is_read_where_the_ranks_load_libnccl() -> None:
    """The preflight and the version read look in nccl.env's LD_LIBRARY_PATH first (its absolute
    folders: a relative one depends on each rank's working directory), then the system's."""
    cluster = _ring_with_env("    LD_LIBRARY_PATH: /opt/nccl/lib/:build/lib\n")
    assert nccl_run.library_patterns(cluster) == (
        "/opt/nccl/lib/libnccl.so.2*",
        *nccl_run.LIBRARY_GLOBS,
    )
    versions = nccl_run.measure_env(sim_fabric(cluster)).versions
    assert set(versions.values()) == {(2, 28, 9)}
