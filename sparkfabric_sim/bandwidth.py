"""How much bandwidth concurrent flows get (DOMAIN.md sections 1, 4, 5).

Every flow wants a rate (its demand: one RDMA QP ~92-98 Gb/s on a half, 4 QPs 105-112,
loopback ~106) and crosses shared resources: the PCIe x4 link of its PCIe domain on each end
(~110-115 Gb/s, both ports' halves of one domain share it), each end's QSFP port (both halves
together ~185-198), switch legs, and the switch CPU when forwarding falls back to software.
Rates are the max-min fair share (progressive filling), so two flows on both halves of one
port get ~95 each and two flows through one domain get ~55 each.

A port that sends and receives at once carries less each way than one-way: the one published
full-duplex run of two Sparks moved ~340 Gb/s, ~170 each way (catharsis.net.au, "From 96 to 340
Gbit/s"), against 185-198 one-way. So while both directions of a port are busy, each direction's
port resource is capped at `simulate.full_duplex_gbps` (scaled with the link's speed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sparkfabric_sim import noise
from sparkfabric_sim.hardware import LINE_RATE_MBPS

if TYPE_CHECKING:
    from sparkfabric_sim.hardware import Netdev
    from sparkfabric_sim.model import SimCluster

FlowKind = Literal["rdma", "tcp"]
LEG_GBPS = 200.0
DEFAULT_FULL_DUPLEX_GBPS = 170.0  # simulate.full_duplex_gbps's default (catharsis.net.au)
# Where TCP and RDMA meet the same limit (a throttled NIC, the port, software forwarding), TCP
# delivers less of it: TCP/IP headers and ACKs on the wire and the kernel's copy on the GB10's
# cores. Seeded per measurement, so the two never tie to the last digit.
TCP_SHARE = (0.975, 0.995)


@dataclass(frozen=True, slots=True)
class FlowRequest:
    """Traffic one client would send; `key` names the measurement for its seeded noise."""

    kind: FlowKind
    src: Netdev
    dst: Netdev
    lanes: int
    key: str

    @property
    def loopback(self) -> bool:
        return self.src.node == self.dst.node


def _u(model: SimCluster, lo: float, hi: float, *key: object) -> float:
    return noise.uniform(model.seed, lo, hi, *key)


def _dead(model: SimCluster, dev: Netdev) -> bool:
    return (dev.port, dev.rail) in model.node(dev.node).dead_halves


def _through_switch(model: SimCluster, f: FlowRequest) -> tuple[str, ...]:
    return () if f.loopback else model.legs_between(f.src, f.dst)


def demand(model: SimCluster, f: FlowRequest) -> float:
    if _dead(model, f.src) or _dead(model, f.dst):
        return _u(model, 0.2, 0.4, f.key) if f.kind == "rdma" else _u(model, 0.005, 0.03, f.key)
    pfc = model.pfc_nodes & {f.src.node, f.dst.node}
    if f.kind == "rdma" and pfc and _through_switch(model, f):
        return _u(model, 3.0, 6.0, f.key)
    if f.kind == "tcp":
        per_stream = _u(model, 30.0, 40.0, f.key, "stream")
        return min(f.lanes * per_stream, _u(model, 104.0, 110.0, f.key))
    if f.loopback:
        return _u(model, 104.0, 108.0, f.key)
    if f.lanes >= 4:
        return _u(model, 105.0, 112.0, f.key)
    if f.lanes > 1:
        return _u(model, 100.0, 106.0, f.key)
    return _u(model, 92.0, 98.0, f.key)


def domain_cap(model: SimCluster, node: str, rail: int) -> float:
    n = model.node(node)
    cap = _u(model, 110.0, 115.0, "domain", node, rail) * n.width(rail) / 4
    if n.throttle_gbps is not None:
        cap = min(cap, n.throttle_gbps * _u(model, 0.97, 1.03, "throttle", node, rail))
    return cap


def port_cap(model: SimCluster, node: str, port: int) -> float:
    # Both halves of a 200G port together reach 185-198 Gb/s; a link that negotiated less
    # (100G cable, Spark-side breakout) scales that ceiling with its line rate.
    rate = model.link_speed_mbps(node, port) / LINE_RATE_MBPS
    return _u(model, 185.0, 198.0, "port", node, port) * rate


def _duplex_cap(model: SimCluster, node: str, port: int) -> float:
    sim = model.cluster.spec.simulate
    each_way = sim.full_duplex_gbps if sim is not None else DEFAULT_FULL_DUPLEX_GBPS
    rate = model.link_speed_mbps(node, port) / LINE_RATE_MBPS
    return each_way * rate * _u(model, 0.99, 1.01, "duplex", node, port)


def _busy_both_ways(flows: Sequence[FlowRequest]) -> set[tuple[str, int]]:
    """The ports that send and receive at once among these flows (loopback crosses no port)."""
    tx = {(f.src.node, f.src.port) for f in flows if not f.loopback}
    rx = {(f.dst.node, f.dst.port) for f in flows if not f.loopback}
    return tx & rx


def resources(
    model: SimCluster, f: FlowRequest, duplex: set[tuple[str, int]] | None = None
) -> list[tuple[str, float]]:
    """The resources `f` crosses and their capacity; `duplex`: the ports busy both ways."""
    both = duplex or set()

    def port(node: str, number: int) -> float:
        cap = port_cap(model, node, number)
        return min(cap, _duplex_cap(model, node, number)) if (node, number) in both else cap

    out = [
        (f"dom-tx:{f.src.node}:{f.src.rail}", domain_cap(model, f.src.node, f.src.rail)),
        (f"dom-rx:{f.dst.node}:{f.dst.rail}", domain_cap(model, f.dst.node, f.dst.rail)),
    ]
    if f.loopback:
        return out
    out += [
        (f"port-tx:{f.src.node}:{f.src.port}", port(f.src.node, f.src.port)),
        (f"port-rx:{f.dst.node}:{f.dst.port}", port(f.dst.node, f.dst.port)),
    ]
    legs = _through_switch(model, f)
    if legs:
        out += [
            (f"leg-in:{legs[0]}", LEG_GBPS),
            (f"leg-out:{legs[1]}", _egress_gbps(model, legs[1])),
        ]
        if model.switch is not None and not model.switch.hw_offload:
            out.append(("switch-cpu", _u(model, 5.0, 10.0, "switch-cpu")))
    return out


def _egress_gbps(model: SimCluster, leg: str) -> float:
    """A leg's egress toward its node: line rate, or its port shaper (egress-rate) when set."""
    if model.switch is None:
        return LEG_GBPS
    cfg = next((x for x in model.switch.legs if x.name == leg), None)
    if cfg is None or cfg.egress_rate_mbps is None:
        return LEG_GBPS
    return min(LEG_GBPS, cfg.egress_rate_mbps / 1000)


def crosses_switch(model: SimCluster, f: FlowRequest) -> bool:
    return bool(_through_switch(model, f))


def allocate(
    model: SimCluster,
    flows: Sequence[FlowRequest],
    background: Sequence[tuple[FlowRequest, float]] = (),
) -> list[float]:
    """Max-min fair rates (Gb/s) for `flows`; `background` flows keep the rate they have."""
    caps: dict[str, float] = {}
    uses: list[list[str]] = []
    duplex = _busy_both_ways([*flows, *(f for f, _ in background)])
    for f in flows:
        names = []
        for name, cap in resources(model, f, duplex):
            caps.setdefault(name, cap)
            names.append(name)
        uses.append(names)
    for f, rate in background:
        for name, cap in resources(model, f, duplex):
            caps[name] = max(0.0, caps.get(name, cap) - rate)
    rates = [0.0] * len(flows)
    want = [demand(model, f) for f in flows]
    active = set(range(len(flows)))
    limited: set[int] = set()
    users_of: dict[str, list[int]] = {name: [] for name in caps}
    for i, names in enumerate(uses):
        for name in dict.fromkeys(names):
            users_of[name].append(i)
    while active:
        share: dict[str, float] = {}
        for name, cap in caps.items():
            users = sum(1 for i in users_of[name] if i in active)
            if users:
                share[name] = cap / users
        bottleneck = min(share.values(), default=float("inf"))
        smallest = min(want[i] - rates[i] for i in active)
        step = min(bottleneck, smallest)
        for i in active:
            rates[i] += step
            for name in uses[i]:
                caps[name] -= step
        done = {i for i in active if want[i] - rates[i] <= 1e-9}
        capped = {i for i in active if any(caps[name] <= 1e-9 for name in uses[i])} - done
        limited |= capped
        active -= done | capped
    for i in limited:
        if flows[i].kind == "tcp":
            rates[i] *= _u(model, *TCP_SHARE, flows[i].key, "tcp-share")
    return rates
