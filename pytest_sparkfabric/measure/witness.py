"""The session's measurements as diagnosis evidence, and failure messages that carry findings. Where
the cause needs one more measurement (slow RDMA with a healthy loopback: only TCP tells), that phase
runs now; it is cached, so its own items later reuse it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from ipaddress import IPv4Address
from typing import TYPE_CHECKING, NoReturn

import pytest

from pytest_sparkfabric import objects as objs
from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.plan import DirectedLink
from pytest_sparkfabric.diagnosis import evidence as ev
from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.measure import (
    bwplan,
    cabling,
    counters,
    facts,
    links,
    nccl_run,
    rdma,
    reach,
    switch,
)
from pytest_sparkfabric.measure.nccl_run import NcclRun
from pytest_sparkfabric.measure.rdma import Loopbacks, RdmaRun

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.model import Rail
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.objects import Obj
    from pytest_sparkfabric.verdict import Verdict


def _loopback(lb: Loopbacks | None) -> tuple[ev.Rate, ...]:
    return tuple(
        ev.Rate(r.src.id, (r.src.node,), r.gbps, r.src.rdma, r.error, (objs.rail(r.src),))
        for r in (lb.results.values() if lb is not None else ())
    )


def _rdma(run: RdmaRun | None) -> tuple[ev.Rate, ...]:
    return tuple(
        ev.Rate(r.where, (r.src.node, r.dst.node), r.gbps, r.where, r.error, (objs.direction(d),))
        for results in (run.links.values() if run is not None else ())
        for r in results
        for d in (DirectedLink(r.src, r.dst),)
    )


def _pairs(fabric: Fabric, run: RdmaRun | None, rdma: bool) -> tuple[ev.PairRates, ...]:
    """One entry per measured direction of a pair, its rails together."""
    out = []
    for pair in fabric.plan.pairs:
        ends = (pair.a, pair.b)
        for results in run.directions(pair) if run is not None else ():
            rails = tuple(
                ev.Rate(
                    r.where,
                    ends,
                    r.gbps,
                    f"rail{link.rail}",
                    None if rdma else r.error,
                    (objs.link(link),),
                )
                for link, r in zip(pair.links, results, strict=True)
            )
            where = pair.id + ("" if results[0].src.node == pair.a else " (b->a)")
            devices = tuple(link.a.rdma for link in pair.links) if rdma else ()
            out.append(ev.PairRates(where, ends, rails, devices, objs.path(pair)))
    return tuple(out)


def _no_link(fabric: Fabric) -> tuple[ev.Site, ...]:
    return tuple(
        ev.Site(rail.id, (rail.node,), cable(fabric, rail))
        for rail in fabric.cluster.rails
        if (eth := links.ethtool(fabric, rail).value) is not None and eth.link_detected is False
    )


def _slow_links(fabric: Fabric) -> tuple[ev.Site, ...]:
    out = []
    for rail in fabric.cluster.rails:
        eth = links.ethtool(fabric, rail).value
        speed = eth.speed_mbps if eth is not None else None
        if eth is not None and eth.link_detected and speed and speed < rail.link_speed_mbps:
            where = f"{rail.id} at {speed}Mb/s (declared {rail.link_speed_mbps}Mb/s)"
            out.append(ev.Site(where, (rail.node,)))
    return tuple(out)


def _launch(fabric: Fabric) -> tuple[ev.Site, ...]:
    return tuple(
        ev.Site("; ".join(found), (n.name,))
        for n in fabric.cluster.nodes
        if (found := nccl_run.problems(fabric, n.name, down_links=False))
    )


_PERFTEST_REFUSED = re.compile(r"Couldn't connect to (\d+\.\d+\.\d+\.\d+):(\d+)")
_IPERF_REFUSED = re.compile(r"-c (\d+\.\d+\.\d+\.\d+)\b.*?-p (\d+)|-p (\d+)\b.*?-c (\S+)")


def _refused(fabric: Fabric) -> tuple[ev.Site, ...]:
    """Connects that failed to a node whose address answers pings: its firewall. The pings
    run now where a failed connect asks and they have not run yet (one concurrent round)."""
    failed: list[tuple[str, str, str, str]] = []
    run = fabric.measured(rdma.NAME, RdmaRun)
    for r in (r for rs in run.links.values() for r in rs) if run is not None else ():
        if r.error and (m := _PERFTEST_REFUSED.search(r.error)):
            failed.append((m.group(1), m.group(2), "ib_write_bw", r.src.node))
    tcp = fabric.measured(rdma.TCP, RdmaRun)
    for t in (t for ts in tcp.links.values() for t in ts) if tcp is not None else ():
        refused = t.error and "unable to connect to server" in t.error
        if refused and (m := _IPERF_REFUSED.search(t.command)):
            ip, port = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            failed.append((ip, port, "iperf3", t.src.node))
    if not failed:
        return ()
    answered = {
        str(d.dst.address.ip)
        for d in bwplan.directed_links(fabric.cluster, fabric.plan)
        if (p := reach.ping(fabric, d).value) is not None and p.ok
    }
    owners = facts.observed_ipv4(fabric)
    seen: dict[str, dict[str, set[str]]] = {}
    for ip, port, tool, client in failed:
        server = owners[ip][0][0] if owners.get(ip) else None
        if ip in answered and server is not None and server != client:
            seen.setdefault(server, {}).setdefault(tool, set()).add(port)
    return tuple(
        ev.Site(
            f"servers listened on {server} but clients could not connect ("
            + "; ".join(f"{tool} port {', '.join(sorted(p))}" for tool, p in tools.items())
            + "), while its addresses answer pings",
            (server,),
        )
        for server, tools in seen.items()
    )


def _narrow_pcie(fabric: Fabric) -> tuple[ev.Site, ...]:
    return tuple(
        ev.Site(f"{rail.id} PCIe {rail.pci} at {link.text}", (rail.node,), pcie_half(fabric, rail))
        for rail in fabric.cluster.rails
        if (link := facts.pcie(fabric, rail).value) is not None
        and (
            (link.width is not None and link.width < hardware.PCIE_WIDTH)
            or (link.speed_gt_s is not None and link.speed_gt_s < hardware.PCIE_SPEED_GTS)
        )
    )


def _duplicate_ips(fabric: Fabric) -> tuple[ev.Site, ...]:
    out = []
    for ip, owners in facts.observed_ipv4(fabric).items():
        # Only the fabric's subnets: loopback and management addresses are none of ours.
        if len(owners) > 1 and any(IPv4Address(ip) in net for net in fabric.plan.subnets):
            where = ", ".join(f"{node} {netdev}" for node, netdev in owners)
            found = [objs.rail_by_netdev(fabric.cluster, n, d) for n, d in owners]
            rails = tuple(o for o in found if o is not None)
            out.append(
                ev.Site(f"{ip} on {where}", tuple(dict.fromkeys(n for n, _ in owners)), rails)
            )
    return tuple(out)


def _switch_cpu(fabric: Fabric) -> float | None:
    """The switch's cpu-load where cluster.yaml has a switch: the highest sampled while traffic
    flowed, else the one read of the switch (a CPU that forwards in software is busy only
    during traffic, so that read may miss it)."""
    if fabric.cluster.spec.switch is None:
        return None
    during = counters.peak_cpu_pct(fabric)
    if during is not None:
        return during
    state = switch.state(fabric).value
    resource = state.resource.value if state is not None else None
    load = resource.cpu_load_pct if resource is not None else None
    return float(load) if load is not None else None


# The RoCE path MTU the cluster MTU gives (kernel iboe_get_mtu: netdev MTU less 96 bytes,
# rounded down to an IB MTU, at most 4096) and one RDMA WRITE packet of it as an IP packet
# (IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4 on top of the payload, include/rdma/ib_pack.h).
ROCE_RESERVED_B = 96
ROCE_PACKET_OVERHEAD_B = 60


def roce_packet_bytes(netdev_mtu: int) -> int:
    ib = next((m for m in (4096, 2048, 1024, 512) if netdev_mtu - ROCE_RESERVED_B >= m), 256)
    return ib + ROCE_PACKET_OVERHEAD_B


def _short_legs(fabric: Fabric) -> tuple[ev.Site, ...]:
    spec = fabric.cluster.spec.switch
    if spec is None:
        return ()
    state = switch.state(fabric).value
    ports = state.ethernet.value if state is not None else None
    if ports is None:
        return ()
    need = roce_packet_bytes(fabric.cluster.mtu)
    out = []
    for node, leg in spec.ports.items():
        port = ports.get(leg)
        sizes = [v for v in (port.mtu_bytes, port.l2mtu_bytes) if v is not None] if port else []
        if port is not None and sizes and min(sizes) < need:
            where = (
                f"switch port {leg} mtu {port.mtu_bytes} l2mtu {port.l2mtu_bytes}, below the "
                f"{need}-byte RoCE packet of MTU {fabric.cluster.mtu}"
            )
            out.append(ev.Site(where, (node,), (objs.leg(leg), objs.node(node))))
    return tuple(out)


def collect(
    fabric: Fabric, *, loopback: bool = False, tcp: bool = False, links: bool = True
) -> ev.Evidence:
    """Evidence from every phase that has run; `loopback`/`tcp` run those phases first."""
    if loopback:
        rdma.loopbacks(fabric)
    if tcp and fabric.measured(rdma.TCP, RdmaRun) is None:
        fabric.progress("slow RDMA with a healthy loopback: measuring TCP to tell the cause")
        rdma.tcp_runs(fabric)
    run = fabric.measured(rdma.NAME, RdmaRun)
    nccl = fabric.measured(nccl_run.NAME, NcclRun)
    return ev.Evidence(
        loopback=_loopback(fabric.measured(rdma.LOOPBACK, Loopbacks)),
        rdma=_rdma(run),
        pairs=_pairs(fabric, run, rdma=True),
        tcp=_pairs(fabric, fabric.measured(rdma.TCP, RdmaRun), rdma=False),
        nccl=nccl_run.evidence(fabric.cluster, nccl) if nccl is not None else None,
        no_link=_no_link(fabric) if links else (),
        switch_cpu_load_pct=_switch_cpu(fabric) if links else None,
        narrow_pcie=_narrow_pcie(fabric) if links else (),
        duplicate_ips=_duplicate_ips(fabric) if links else (),
        short_legs=_short_legs(fabric) if links else (),
        shared=(objs.SWITCH,) if fabric.cluster.topology == "switch" else (),
        miscabled=cabling.cabling(fabric).mistakes if links else (),
        slow_links=_slow_links(fabric) if links else (),
        launch=_launch(fabric) if nccl is not None else (),
        refused=_refused(fabric),
    )


def needs_tcp(fabric: Fabric, gbps: Iterable[float | None], nodes: Iterable[str]) -> bool:
    """A slow RDMA figure between NICs whose loopback is healthy: only TCP tells the cause."""
    if not any(g is not None and g <= ev.LOW_RDMA_MAX_GBPS for g in gbps):
        return False
    lb = rdma.loopbacks(fabric).results.values()
    wanted = set(nodes)
    return all(
        r.gbps is None or r.gbps >= ev.THROTTLED_MAX_GBPS for r in lb if r.src.node in wanted
    )


def path(*values: object) -> tuple[Obj, ...]:
    """The objects on an item's path, from its parameters (rail, link, node pair, node)."""
    return tuple(o for v in values for o in objs.path(v))


def cable(fabric: Fabric, rail: Rail) -> tuple[Obj, ...]:
    """The cable a rail runs over (what a rail without carrier blames), else the rail."""
    found = objs.cable_of(fabric.plan, rail.node, rail.port)
    return (found,) if found is not None else (objs.rail(rail),)


def pcie_half(fabric: Fabric, rail: Rail) -> tuple[Obj, ...]:
    """The rails that share the rail's PCIe link: its index on every port of the node."""
    # Both ports' functions of one half sit on one x4 link (0000:01:00.0/.1, 0002:01:00.0/.1).
    return tuple(
        objs.rail(r) for r in fabric.cluster.node(rail.node).rails if r.index == rail.index
    )


def findings(
    fabric: Fabric,
    nodes: Iterable[str] = (),
    *,
    on: Sequence[Obj] = (),
    loopback: bool = False,
    tcp: bool = False,
    prefer: Sequence[RuleId] = (),
    only: Sequence[RuleId] = (),
) -> list[ev.Finding]:
    """Findings about the objects `on` the item's path (or, without them, that concern `nodes`;
    all when both are empty), the rules in `prefer` first; `only` keeps the rules that can
    explain the item at all."""
    wanted = list(nodes)
    mine = [
        f
        for f in diagnose(collect(fabric, loopback=loopback, tcp=tcp))
        if (f.about(on) if on else f.concerns(wanted)) and (not only or f.rule.id in only)
    ]
    rank = {rule: i for i, rule in enumerate(prefer)}
    return sorted(mine, key=lambda f: (not f.certain, rank.get(f.rule.id, len(rank))))


def fail(verdict: Verdict, message: str, found: Sequence[ev.Finding]) -> NoReturn:
    """Fail the item: what was measured and expected, then every finding (first = likely)."""
    lines = [message]
    verdict.blame(found)
    if found:
        first = found[0]
        verdict(rule=first.rule.id, cause=first.cause_text, fix=first.fix_text)
        if len(ids := list(dict.fromkeys(f.rule.id for f in found))) > 1:
            verdict(rules=",".join(ids))
        lines.append(first.render())
        lines += [f.render("Also likely" if f.certain else "Also possible") for f in found[1:]]
    else:
        lines.append(
            "No known fault signature matches (the known ones: docs/diagnosis.md); see the "
            "measured values above."
        )
    pytest.fail("\n".join(lines), pytrace=False)
