"""TCP bandwidth (iperf3 -J, parallel streams on both netdevs of a pair at once): what a job
that does not use RDMA gets. One stream or one netdev under-reports on a Spark (DOMAIN.md §4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import rdma, witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, NodePair, Verdict

pytestmark = [pytest.mark.tcp, pytest.mark.sparkfabric_needs("iperf3")]


def test_pair_tcp(node_pair: NodePair, fabric: Fabric, verdict: Verdict) -> None:
    """iperf3 -P N on every netdev of the pair at the same time, summed, in each direction the
    schedule measures."""
    th = fabric.limit("tcp_pair_gbps", *(r for link in node_pair.links for r in (link.a, link.b)))
    run = rdma.tcp_runs(fabric)
    round_no = run.round_of[node_pair.id]
    results = tuple(r for link in node_pair.links for r in run.links[link.id])
    verdict(
        nodes=f"{node_pair.a},{node_pair.b}",
        round=round_no,
        expected=th.expected(),
        source=th.source,
        streams=fabric.cluster.spec.bandwidth.iperf3_streams,
    )
    per = ", ".join(
        f"{r.label} " + (f"{r.gbps:.1f} Gb/s" if r.gbps is not None else "no result")
        for r in results
    )
    verdict(measured=per)
    for r in results:
        if r.unmeasured is not None:
            raise r.unmeasured
    errors = [r for r in results if r.gbps is None]
    if errors:
        why = "; ".join(f"{r.src.id}->{r.dst.id}: {r.error}" for r in errors)
        witness.fail(
            verdict,
            f"TCP on both netdevs: no result for {why}",
            witness.findings(fabric, on=witness.path(node_pair)),
        )
    # Each measured direction on its own: both netdevs of that direction summed.
    totals: dict[str, float] = {}
    for r in results:
        way = f"{r.src.node}->{r.dst.node}"
        totals[way] = totals.get(way, 0.0) + (r.gbps or 0.0)
    verdict(measured_gbps=min(totals.values()))
    slow = {way: total for way, total in totals.items() if not th.ok(total)}
    if slow:
        ways = "; ".join(f"{way} {total:.1f} Gb/s" for way, total in slow.items())
        witness.fail(
            verdict,
            f"TCP on both netdevs together: {ways}, {th.describe()}\n{per}",
            witness.findings(
                fabric, on=witness.path(node_pair), prefer=["half_port", "switch_cpu_forwarding"]
            ),
        )
