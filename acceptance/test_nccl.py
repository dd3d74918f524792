"""NCCL bus bandwidth (nccl-tests across all nodes, NCCL_DEBUG=INFO): the run completes and is
correct, every rank uses IB with both RoCE devices of its cabled port, and the average bus
bandwidth meets the floor for this topology and node count (DOMAIN.md §3, §5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.cluster.model import declared_mbps
from pytest_sparkfabric.cluster.thresholds import busbw_floor, message_bytes
from pytest_sparkfabric.measure import nccl_run, witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Cluster, Fabric, Node, Verdict
    from pytest_sparkfabric.diagnosis.rules import RuleId

pytestmark = [pytest.mark.nccl, pytest.mark.sparkfabric_needs("nccl.launcher")]

NCCL_RULES: tuple[RuleId, ...] = ("nccl_socket", "nccl_single_hca")


def test_nccl_completes(cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """The run prints its '# Avg bus bandwidth' line, #wrong is 0, out of bounds values 0 OK."""
    run = nccl_run.run(fabric)
    verdict.about(objects.CLUSTER)  # the job of every rank, not of the host mpirun started on
    verdict(
        launched_on=run.launch_node,
        command=run.command,
        expected="Avg bus bandwidth line, #wrong 0, out of bounds 0 OK",
    )
    problems = run.problems()
    if problems:
        witness.fail(
            verdict,
            f"NCCL {cluster.spec.nccl.binary} on {len(cluster.nodes)} ranks did not complete: "
            + "; ".join(problems),
            witness.findings(fabric, loopback=True, prefer=NCCL_RULES),
        )
    verdict(measured="completed")


def test_nccl_uses_ib(node: Node, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """The node's rank says `Using network IB` and lists both RoCE devices of its port(s)."""
    expected = nccl_run.expected_devices(cluster, node.name)
    verdict(node=node.name, expected=f"network IB, devices {','.join(expected)}")
    run = nccl_run.run(fabric)
    if run.parsed is None:
        # The job as a whole did not run: that is about every node, not this rank.
        verdict.about(objects.CLUSTER)
        witness.fail(
            verdict,
            f"not measured: {run.error}",
            witness.findings(fabric, loopback=True, prefer=NCCL_RULES),
        )
    rank = run.ranks.get(node.name)
    if rank is None or not rank.seen:
        witness.fail(
            verdict,
            f"{node.name}: NCCL_DEBUG=INFO printed no NET/IB, NET/Socket or 'Using network' "
            "line for this rank (is NCCL_DEBUG overridden?)",
            witness.findings(fabric, on=witness.path(node), prefer=NCCL_RULES),
        )
    nets = ",".join(sorted(rank.networks)) or "?"
    verdict(
        rank=rank.rank,
        measured=f"network {nets}, devices {','.join(rank.devices) or 'none'}",
    )
    ib = any(n.startswith("IB") for n in rank.networks) or (
        bool(rank.devices) and not rank.networks
    )
    missing = [d for d in expected if d not in rank.devices]
    if rank.socket or not ib or missing:
        seen = f"network {nets}" + (", NET/Socket" if rank.socket else "")
        seen += f", NET/IB devices: {','.join(rank.devices) or 'none'}"
        witness.fail(
            verdict,
            f"{node.name} (rank {rank.rank}): {seen}; expected network IB with "
            f"{','.join(expected)}" + (f" (missing {','.join(missing)})" if missing else ""),
            witness.findings(fabric, on=witness.path(node), prefer=NCCL_RULES),
        )


def test_nccl_busbw(cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """Bus bandwidth at the run's largest message size meets the floor for this topology, node
    count and size (cluster/thresholds.py BUSBW_FLOORS, docs/thresholds.md)."""
    th = fabric.thresholds["nccl_busbw_gbytes_s"]
    run = nccl_run.run(fabric)
    by_size = run.busbw_by_size()
    if by_size:
        verdict(busbw_by_size=", ".join(f"{s}:{v:g}" for s, v in by_size.items()))
    size = max(by_size) if by_size else message_bytes(cluster.spec.nccl.size)
    if not th.fixed:
        # No override: the floor follows the size actually run (a template may change -e).
        th = busbw_floor(cluster.topology, len(cluster.nodes), size) or th
    th = th.at_speed(declared_mbps(*cluster.rails))  # the slowest declared link carries NCCL
    verdict.about(objects.CLUSTER)
    verdict(
        ranks=len(cluster.nodes),
        topology=cluster.topology,
        size_bytes=size,
        expected=th.expected(),
        source=th.source,
    )
    if run.parsed is None or not by_size:
        witness.fail(
            verdict,
            "no bus bandwidth row: " + "; ".join(run.problems() or ["no result rows"]),
            witness.findings(fabric, loopback=True, prefer=NCCL_RULES),
        )
    busbw = by_size[size]
    verdict(measured=f"{busbw:g} GB/s at {size} bytes", measured_gbytes_s=busbw)
    if not th.ok(busbw):
        witness.fail(
            verdict,
            f"NCCL {cluster.spec.nccl.binary}, {len(cluster.nodes)} nodes ({cluster.topology}): "
            f"bus bandwidth {busbw:g} GB/s at {size} bytes, {th.describe()}",
            witness.findings(fabric, loopback=True, prefer=NCCL_RULES),
        )
