"""diagnose(): a session's evidence -> the causes it shows, most specific first. Each diagnoser
reads one signature of DOMAIN.md §4-5 from an `Evidence` (the thresholds are in
`diagnosis.evidence`, with their sources); the rules themselves (cause, fix) are data in
`diagnosis.rules`. One module on purpose: the order of the diagnosers (`DIAGNOSERS`) matters."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pytest_sparkfabric.diagnosis.evidence import (
    DEAD_RAIL_MAX_GBPS,
    LIVE_RAIL_MIN_GBPS,
    LOW_RDMA_MAX_GBPS,
    NCCL_CRAWL_MAX_GBYTES_S,
    SINGLE_HCA_GBYTES_S,
    SWITCH_CPU_BUSY_PCT,
    TCP_FINE_MIN_GBPS,
    TCP_SLOW_MAX_GBPS,
    THROTTLED_MAX_GBPS,
    Evidence,
    Finding,
    PairRates,
    Rate,
    Site,
)
from pytest_sparkfabric.diagnosis.rules import RULES, RuleId
from pytest_sparkfabric.objects import Obj
from pytest_sparkfabric.objects import node as node_obj

Diagnoser = Callable[[Evidence], list[Finding]]
_DEAD_HALF = (
    f"{RULES['half_port'].cause}: the other carries (almost) nothing even in loopback, inside "
    "the box, so that half or its PCIe link is faulty hardware, not a setting"
)
_DEAD_HALF_FIX = (
    "check the PCIe training of {devices} (`lspci -vv` on its PCI function: LnkSta 32GT/s, "
    "Width x4), then power-drain the box (shut down, unplug power for 60 s); if the half stays "
    "dead, reseat or have the unit serviced"
)
EGRESS_SHARE_MAX = 0.75
"""Into a node at most this share of what it sends: one direction capped, not a NIC or cable
(a throttled NIC, a dead half or a bad cable slow both directions alike)."""


def _find(
    rule: RuleId, where: str, nodes: Iterable[str], seen: str, *more: Any, **kw: Any
) -> Finding:
    """A finding of `rule` (`more`, `kw`: Finding's fix, certain, objects and cause)."""
    return Finding(RULES[rule], where, tuple(nodes), seen, *more, **kw)


def _g(r: Rate) -> float:
    return r.gbps or 0.0


def _each(rates: Iterable[Rate | PairRates]) -> str:
    """`rail0 12.0 Gb/s, rail1 0.1 Gb/s`: each figure with its label (a pair: its total)."""
    return ", ".join(
        f"{r.label or r.where} {_g(r):.1f} Gb/s"
        if isinstance(r, Rate)
        else f"{r.where} {r.total_gbps or 0.0:.1f} Gb/s"
        for r in rates
    )


def _nodes(items: Iterable[Site | Rate]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for x in items for n in x.nodes))


def _objects(items: Iterable[Rate | Site | PairRates]) -> tuple[Obj, ...]:
    return tuple({o.id: o for x in items for o in x.objects}.values())


def _loopbacks(ev: Evidence) -> dict[str, tuple[list[Rate], list[Rate], list[Rate], int]]:
    """Each box's loopback rates: (dead, in the throttled band, live, how many)."""
    boxes: dict[str, list[Rate]] = {}
    for r in ev.loopback:
        if r.gbps is not None:
            boxes.setdefault(r.nodes[0] if r.nodes else r.where, []).append(r)
    return {
        node: (
            [r for r in rates if _g(r) <= DEAD_RAIL_MAX_GBPS],
            [r for r in rates if DEAD_RAIL_MAX_GBPS < _g(r) < THROTTLED_MAX_GBPS],
            [r for r in rates if _g(r) >= LIVE_RAIL_MIN_GBPS],
            len(rates),
        )
        for node, rates in boxes.items()
    }


def _throttled(ev: Evidence) -> dict[str, list[Rate]]:
    """Boxes whose loopback crawls: some rail in the throttled band, or every rail ~0."""
    return {n: b or d for n, (d, b, _, k) in _loopbacks(ev).items() if b or len(d) == k}


def _dead_halves(ev: Evidence) -> dict[str, tuple[list[Rate], list[Rate]]]:
    """Boxes where one rail carries ~nothing even in loopback while another runs: (dead, live)."""
    return {n: (d, live) for n, (d, _, live, _) in _loopbacks(ev).items() if d and live}


def _short_leg(ev: Evidence) -> list[Finding]:
    """RDMA without a result through a switch leg too small for a RoCE packet: the frames are
    dropped without a word (an L2 switch sends no ICMP), RC retries run out."""
    out = []
    nccl_failed = ev.nccl is not None and not ev.nccl.completed and not ev.nccl.socket
    for leg in ev.short_legs:
        failed = [r.where for r in ev.rdma if r.gbps is None and set(r.nodes) & set(leg.nodes)]
        seen = [f"RDMA without a result on {', '.join(failed[:3])}"] if failed else []
        seen += ["NCCL over IB did not complete"] if nccl_failed else []
        if seen:
            out.append(
                _find("mtu_path", leg.where, leg.nodes, "; ".join(seen), objects=leg.objects)
            )
    return out


def _link_down(ev: Evidence) -> list[Finding]:
    """One finding per cable: the rails without carrier grouped by the cable they are on."""
    by_cable: dict[str, list[Site]] = {}
    for s in ev.no_link:
        by_cable.setdefault(",".join(o.id for o in s.objects) or "?", []).append(s)
    out = []
    for sites in by_cable.values():
        where = ", ".join(s.where for s in sites)
        cable = _objects(sites)
        seen = f"{where}: no carrier (ethtool: Link detected: no)"
        head = cable[0].id if len(cable) == 1 else where
        out.append(_find("link_down", head, _nodes(sites), seen, objects=cable))
    return out


def _miscabled(ev: Evidence) -> list[Finding]:
    """One finding per physical mistake; a missing cable is `_link_down`'s (no carrier)."""
    out = []
    for m in (m for m in ev.miscabled if m.kind != "missing"):
        where = ", ".join(w.id for w in m.planned or m.found)
        out.append(_find("miscabled", where, m.nodes, m.seen, m.fix, True, m.objects, m.cause))
    return out


def _speed_degraded(ev: Evidence) -> list[Finding]:
    if not ev.slow_links:
        return []
    where = ", ".join(s.where for s in ev.slow_links)
    seen = "ethtool: link up below its declared speed (cluster.yaml link_speed)"
    return [_find("speed_degraded", where, _nodes(ev.slow_links), seen)]


def _nic_throttled(ev: Evidence) -> list[Finding]:
    out = []
    for node, rates in _throttled(ev).items():
        seen = f"loopback {_each(rates)} with no cable involved; healthy ~106 Gb/s"
        certain = any(_g(r) > DEAD_RAIL_MAX_GBPS for r in rates)
        out.append(
            _find("nic_throttled", node, rates[0].nodes[:1], seen, "", certain, (node_obj(node),))
        )
    return out


def _live_and_dead(p: PairRates) -> bool:
    """One rail of the pair carries ~nothing while another runs near line rate."""
    rates = [r.gbps for r in p.rails if r.gbps is not None]
    live = any(g >= LIVE_RAIL_MIN_GBPS for g in rates)
    return live and any(g <= DEAD_RAIL_MAX_GBPS for g in rates)


def _half_port(ev: Evidence) -> list[Finding]:
    halves = _dead_halves(ev)
    out = []
    for dead, live in halves.values():
        where = ", ".join(r.where for r in dead)
        seen = f"loopback {_each(dead + live)}: one half carries nothing even inside the box"
        fix = _DEAD_HALF_FIX.format(devices=", ".join(r.label or r.where for r in dead))
        out.append(
            _find(
                "half_port", where, dead[0].nodes[:1], seen, fix, True, _objects(dead), _DEAD_HALF
            )
        )
    skip = {*_nodes(ev.no_link), *_throttled(ev), *halves}
    for kind, groups in (("RDMA", ev.pairs), ("TCP", ev.tcp)):
        for p in groups:
            if not _live_and_dead(p) or set(p.nodes) & skip or any(f.where == p.where for f in out):
                continue
            hca = f" (NCCL_IB_HCA={','.join(p.devices)})" if p.devices else ""
            fix = f"drive both netdevs / both RoCE devices{hca}" if hca else ""
            seen = f"{kind} {_each(p.rails)}"
            out.append(_find("half_port", p.where, p.nodes, seen, fix, objects=p.objects))
    return out


def _egress_capped(ev: Evidence) -> dict[str, tuple[list[Rate], list[Rate]]]:
    """Nodes every partner sends to slowly while they send at full rate: node -> (into, out)."""
    rates = [r for r in ev.rdma if r.gbps is not None and len(set(r.nodes)) == 2]
    out: dict[str, tuple[list[Rate], list[Rate]]] = {}
    for x in dict.fromkeys(n for r in rates for n in r.nodes):
        into = [r for r in rates if r.nodes[1] == x]
        sent = [r for r in rates if r.nodes[0] == x]
        if into and sent:
            fine = min(map(_g, sent))
            if fine >= LIVE_RAIL_MIN_GBPS and max(map(_g, into)) < EGRESS_SHARE_MAX * fine:
                out[x] = (into, sent)
    return out


def _egress_cap(ev: Evidence) -> list[Finding]:
    found = []
    for x, (into, sent) in _egress_capped(ev).items():
        senders = ", ".join(dict.fromkeys(r.nodes[0] for r in into))
        seen = (
            f"RDMA into {x} from {senders} {_summary(into)[5:]}, while {x} sends at "
            f"{min(map(_g, sent)):.1f} Gb/s or more: one direction only, toward {x}"
        )
        found.append(_find("egress_rate_cap", f"the switch leg toward {x}", (x,), seen))
    return found


def _slow_rails(ev: Evidence) -> list[Rate]:
    """Rails that crawl on nodes whose NIC is not throttled, outside a half-used port."""
    rates = list(ev.rdma) or [r for p in ev.pairs for r in p.rails]
    skip = {*_throttled(ev), *_nodes(ev.no_link), *_dead_halves(ev), *_egress_capped(ev)}
    half = {p.nodes for p in ev.pairs if _live_and_dead(p)}
    slow = [r for r in rates if r.gbps is not None and r.gbps <= LOW_RDMA_MAX_GBPS]
    return [r for r in slow if not set(r.nodes) & skip and tuple(r.nodes) not in half]


def _summary(rates: list[Rate]) -> str:
    values = sorted(map(_g, rates))
    if len(values) == 1:
        return f"RDMA {rates[0].label or rates[0].where} {values[0]:.1f} Gb/s"
    lo, hi = f"{values[0]:.1f}", f"{values[-1]:.1f}"
    return f"RDMA {len(values)} rails at {lo if lo == hi else f'{lo}-{hi}'} Gb/s"


def _switch_or_pfc(ev: Evidence) -> list[Finding]:
    slow = _slow_rails(ev)
    nodes = tuple(sorted({n for r in slow for n in r.nodes}))
    tcp = [p for p in ev.tcp if p.total_gbps is not None and set(p.nodes) <= set(nodes)]
    tcp = tcp if slow else list(ev.tcp)
    tcp_slow = [p for p in tcp if (p.total_gbps or 0.0) <= TCP_SLOW_MAX_GBPS]
    tcp_fine = [p for p in tcp if (p.total_gbps or 0.0) >= TCP_FINE_MIN_GBPS]
    cpu = ev.switch_cpu_load_pct
    busy = cpu is not None and cpu >= SWITCH_CPU_BUSY_PCT
    busbw = ev.nccl.busbw_gbytes_s if ev.nccl is not None and not ev.nccl.socket else None
    where = "the switch" if not nodes else "between " + ", ".join(nodes)
    # Both are settings of what all the traffic crosses: the switch where there is one.
    objs = ev.shared or _objects(slow)
    cpu_text = f"; switch cpu-load {cpu:.0f}%" if busy and cpu is not None else ""
    sw: RuleId = "switch_cpu_forwarding"
    if slow and tcp_slow:
        seen = f"{_summary(slow)} and TCP too ({_each(tcp_slow[:3])}){cpu_text}"
        return [_find(sw, where, nodes, seen, objects=objs)]
    if slow and tcp_fine:
        seen = f"{_summary(slow)} while TCP between the same nodes is fine ({_each(tcp_fine[:3])})"
        return [_find("pfc_stall", where, nodes, seen, objects=objs)]
    if slow and busy:
        return [_find(sw, where, nodes, f"{_summary(slow)}{cpu_text}", objects=objs)]
    if slow:
        seen = f"{_summary(slow)}; measure TCP (iperf3 -P on both halves) to tell them apart"
        out = [_find(r, where, nodes, seen, certain=False, objects=objs) for r in (sw, "pfc_stall")]
        known = {n for r in ev.loopback if r.gbps is not None for n in r.nodes}
        unknown = [n for n in nodes if n not in known]
        if unknown:
            seen = f"{_summary(slow)}; no loopback measured on {', '.join(unknown)}"
            boxes = tuple(map(node_obj, unknown))
            out.insert(0, _find("nic_throttled", where, nodes, seen, certain=False, objects=boxes))
        return out
    if tcp_slow and (busy or not ev.rdma):
        seen = f"TCP {_each(tcp_slow[:3])}{cpu_text}"
        return [_find(sw, "the switch", (), seen, certain=busy, objects=ev.shared)]
    if busbw is not None and busbw < NCCL_CRAWL_MAX_GBYTES_S:
        seen = f"NCCL {busbw:g} GB/s over IB{cpu_text}"
        return [_find(sw, "the switch", (), seen, certain=busy, objects=ev.shared)]
    return []


def _nccl_socket(ev: Evidence) -> list[Finding]:
    n = ev.nccl
    if n is None or not (n.socket or "Socket" in n.networks):
        return []
    said = "'Using network Socket'" if "Socket" in n.networks else "NET/Socket, no IB device"
    busbw = f", busbw {n.busbw_gbytes_s:g} GB/s" if n.busbw_gbytes_s is not None else ""
    # With the RoCE ports down NCCL finds no IB device and falls back by itself.
    down = "; with links down that may be the fallback, not a setting" if ev.no_link else ""
    seen = f"NCCL_DEBUG=INFO says {said}{busbw}{down}"
    return [_find("nccl_socket", n.where, (), seen, certain=not down)]


def _nccl_single_hca(ev: Evidence) -> list[Finding]:
    n = ev.nccl
    if n is None or n.socket or "Socket" in n.networks:
        return []
    hca = f"NCCL_IB_HCA={','.join(n.expected)}" if n.expected else ""
    fix = f"list both RoCE devices of the cabled port: {hca}" if hca else ""
    short: list[str] = []
    for rank, devs in n.devices.items():
        if n.expected and set(n.expected) - set(devs):
            short.append(f"{rank} uses {','.join(devs) or 'no device'}")
        elif not n.expected and len(devs) == 1 and devs[0].startswith("roce"):
            short.append(f"{rank} uses {devs[0]} only")
    busbw = n.busbw_gbytes_s
    if short:
        seen = "NET/IB line: " + "; ".join(short[:4])
        seen += f"; busbw {busbw:g} GB/s" if busbw is not None else ""
        # NCCL leaves out the devices of a port without link by itself.
        down = "; with links down that may be NCCL leaving them out, not a setting"
        seen += down if ev.no_link else ""
        return [_find("nccl_single_hca", n.where, n.nodes, seen, fix, certain=not ev.no_link)]
    lo, hi = SINGLE_HCA_GBYTES_S
    if not n.devices and busbw is not None and lo <= busbw <= hi:
        seen = f"busbw {busbw:g} GB/s, the one-rail figure; no NET/IB line to confirm"
        return [_find("nccl_single_hca", n.where, n.nodes, seen, fix, certain=False)]
    return []


def _sites(
    rule: RuleId, field: Callable[[Evidence], tuple[Site, ...]], seen: str | None = None
) -> Diagnoser:
    """One finding per site of one evidence field; `seen` None: the site's own text."""

    def find(ev: Evidence) -> list[Finding]:
        return [
            _find(
                rule, s.where if seen else s.nodes[0], s.nodes, seen or s.where, objects=s.objects
            )
            for s in field(ev)
        ]

    return find


DIAGNOSERS: tuple[Diagnoser, ...] = (
    _miscabled,
    _link_down,
    _short_leg,
    _speed_degraded,
    _sites("duplicate_ip", lambda ev: ev.duplicate_ips, "one address answers on two interfaces"),
    _sites("pcie_degraded", lambda ev: ev.narrow_pcie, "the NIC half trained below x4 Gen5"),
    _nic_throttled,
    _half_port,
    _egress_cap,
    _switch_or_pfc,
    _sites("nccl_socket_ifname", lambda ev: ev.launch),
    _sites("firewall", lambda ev: ev.refused),
    _nccl_socket,
    _nccl_single_hca,
)
"""The diagnosers in priority order; each returns the findings of the rules it knows."""


def diagnose(evidence: Evidence) -> list[Finding]:
    """Every cause the evidence shows, most specific first; certain findings before guesses."""
    found = [f for rule in DIAGNOSERS for f in rule(evidence)]
    return sorted(found, key=lambda f: not f.certain)
