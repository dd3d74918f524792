"""RDMA bandwidth (ib_write_bw): the NIC self-test on every rail, then the rail links and node
pairs of the bandwidth schedule (`bandwidth.schedule`, default `legs`: every node with two
partners, both directions) with both rails at once (DOMAIN.md §4-5).

The loopback runs first, so a slow pair later is blamed on a throttled NIC, not on the cable.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import rdma, witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Link, NodePair, Rail, Verdict

pytestmark = pytest.mark.bandwidth


def _gb(value: float | None) -> str:
    return "no result" if value is None else f"{value:.1f} Gb/s"


@pytest.mark.sparkfabric_needs("ib_write_bw")
def test_nic_loopback(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Loopback ib_write_bw on the rail's RoCE device (client to its own address) reaches
    line rate: ~106 Gb/s healthy, ~13 Gb/s when the NIC is throttled."""
    th = fabric.thresholds["loopback_gbps"]
    result = rdma.loopback(fabric, rail)
    verdict(
        node=rail.node,
        rail=rail.label,
        device=rail.rdma,
        round=result.round,
        expected=th.expected(),
        source=th.source,
        command=result.command,
    )
    measured = result.measured().require()
    if measured.error is not None:
        # No figure at all: a configuration finding (a duplicate address, no link) may say why.
        witness.fail(
            verdict,
            f"{rail.id} ({rail.rdma}) loopback not measured: {measured.error}",
            witness.findings(fabric, on=witness.path(rail)),
        )
    gbps = measured.get()
    verdict(measured=f"{gbps:.1f} Gb/s", measured_gbps=gbps)
    if not th.ok(gbps):
        witness.fail(
            verdict,
            f"{rail.id} ({rail.rdma}) loopback: {gbps:.1f} Gb/s, {th.describe()}",
            witness.findings(fabric, on=witness.path(rail), prefer=["nic_throttled"]),
        )


@pytest.mark.sparkfabric_needs("ib_write_bw")
def test_rail_rdma(rail_link: Link, fabric: Fabric, verdict: Verdict) -> None:
    """ib_write_bw node to node on one rail (its pair's other rail busy at the same time),
    in each direction the schedule measures, each direction its own figure."""
    th = fabric.limit("rail_rdma_gbps", rail_link.a, rail_link.b)
    results = rdma.pair_runs(fabric).links[rail_link.id]
    nodes = rail_link.nodes()
    verdict(
        nodes=f"{nodes[0]},{nodes[1]}",
        rail=f"rail{rail_link.rail}",
        round=results[0].round,
        expected=th.expected(),
        source=th.source,
    )
    seen = ", ".join(f"{r.where} {_gb(r.gbps)}" for r in results)
    verdict(measured=seen)
    _unmeasured(results)
    errors = [r for r in results if r.gbps is None]
    slow = [r for r in results if r.gbps is not None and not th.ok(r.gbps)]
    if not errors and not slow:
        verdict(measured_gbps=min(r.gbps or 0.0 for r in results))
        return
    values = [r.gbps for r in results]
    found = witness.findings(
        fabric, on=witness.path(rail_link), tcp=witness.needs_tcp(fabric, values, nodes)
    )
    where = _where(fabric, nodes)
    if errors:
        head = "; ".join(f"{r.where}: {r.error}" for r in errors)
        witness.fail(verdict, f"{rail_link.id}: no bandwidth result: {head}{where}", found)
    slow_ways = ", ".join(f"{r.where} (into {r.dst.node})" for r in slow)
    witness.fail(
        verdict, f"{rail_link.id}: {seen}, {th.describe()}; slow: {slow_ways}{where}", found
    )


def _unmeasured(results: Iterable[rdma.BwResult]) -> None:
    """A run that never reached the fabric (tool missing, node lost) is not measured."""
    for r in results:
        if r.unmeasured is not None:
            raise r.unmeasured


def _where(fabric: Fabric, nodes: tuple[str, ...]) -> str:
    """The bandwidth phase's suspects that concern these nodes (measure/localize.py)."""
    lines = rdma.suspects_of(fabric, nodes)
    return "".join(f"\nWhere: {line}" for line in lines)


@pytest.mark.sparkfabric_needs("ib_write_bw")
def test_pair_rdma(node_pair: NodePair, fabric: Fabric, verdict: Verdict) -> None:
    """Both rails of the pair at the same time, summed: one port's full ~185-198 Gb/s one-way
    (~170 each way with `bandwidth.directions: together`), scaled to the declared speed."""
    th = fabric.limit("pair_rdma_gbps", *(r for link in node_pair.links for r in (link.a, link.b)))
    run = rdma.pair_runs(fabric)
    round_no, directions = run.round_of[node_pair.id], run.directions(node_pair)
    verdict(
        nodes=f"{node_pair.a},{node_pair.b}",
        round=round_no,
        expected=th.expected(),
        source=th.source,
    )
    lines: list[str] = []
    seen: list[str] = []
    totals: list[float] = []
    bad = False
    for rails in directions:
        where = f" {rails[0].src.node}->{rails[0].dst.node}"
        per_rail = ", ".join(
            f"rail{link.rail} {_gb(r.gbps)}" for link, r in zip(node_pair.links, rails, strict=True)
        )
        seen.append(f"{where.strip()} {per_rail}".strip())
        gbps = [r.gbps for r in rails]
        total = None if None in gbps else sum(g or 0.0 for g in gbps)
        _unmeasured(rails)
        if total is None:
            bad = True
            errors = "; ".join(f"{r.where}: {r.error}" for r in rails if r.error)
            lines += [f"both rails together{where}: incomplete", per_rail, errors]
            continue
        totals.append(total)
        lines += [f"both rails together{where}: {total:.1f} Gb/s, {th.describe()}", per_rail]
        bad = bad or not th.ok(total)
    verdict(measured="; ".join(seen), measured_gbps=min(totals) if totals else None)
    if bad:
        values = [r.gbps for rails in directions for r in rails]
        nodes = (node_pair.a, node_pair.b)
        found = witness.findings(
            fabric,
            on=witness.path(node_pair),
            tcp=witness.needs_tcp(fabric, values, nodes),
            prefer=["half_port"],
        )
        witness.fail(verdict, "\n".join(lines) + _where(fabric, nodes), found)


@pytest.mark.sparkfabric_needs("ib_write_lat")
def test_pair_rdma_latency(node_pair: NodePair, fabric: Fabric, verdict: Verdict) -> None:
    """ib_write_lat of 2 bytes on rail 0 between the pair (read only): the RDMA path works end
    to end and its latency is near the ~1.5 us two GB10s show over one cable."""
    th = fabric.thresholds["rdma_lat_us"]
    lat = rdma.latency(fabric, node_pair)
    where = f"{lat.src.id}->{lat.dst.id}"
    verdict(
        nodes=f"{node_pair.a},{node_pair.b}",
        rail=f"rail{lat.src.index}",
        expected=th.expected(),
        source=th.source,
        command=lat.command,
    )
    if lat.result.unmeasured is not None:
        raise lat.result.unmeasured
    on = witness.path(node_pair)
    if lat.result.value is None:
        # No figure: whatever broke the path (no link, a firewall, a wrong MTU) says why.
        found = witness.findings(fabric, on=on)
        witness.fail(verdict, f"{where}: no ib_write_lat result: {lat.result.error}", found)
    us = lat.result.value.t_avg_us
    verdict(measured=f"t_avg {us:.2f} us (t_typical {lat.result.value.t_typical_us:.2f})")
    if not th.ok(us):
        found = witness.findings(fabric, on=on, prefer=["switch_cpu_forwarding"])
        witness.fail(verdict, f"{where}: ib_write_lat t_avg {us:.2f} us, {th.describe()}", found)
