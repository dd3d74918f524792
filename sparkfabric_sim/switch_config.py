"""The simulated MikroTik switch's configuration (what `/interface/...` would print)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster.hardware import LEG_LINK_MODES

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster

HEALTHY_L2MTU = 9216
_LEG = re.compile(r"^(?P<dd>.+)-(?P<lane>\d)$")


@dataclass(frozen=True, slots=True)
class LegConfig:
    """One 200G breakout leg (a lane-1 or lane-5 sub-interface of a QSFP56-DD port).

    Healthy legs are forced: auto-negotiation off, speed 200G-baseCR4 (DOMAIN.md section 7).
    """

    name: str
    node: str
    auto_negotiation: bool = False
    speed: str = "200G-baseCR4"
    mtu: int = 9000
    l2mtu: int = HEALTHY_L2MTU
    trust_l3: str = "ignore"
    pfc: str = "disabled"
    egress_rate_queue: tuple[str, ...] = ("0",) * 8
    fcs_error_rate: float = 0.0
    """Frames from the host that arrive corrupted, per frame (a marginal host->switch path)."""
    egress_rate_mbps: int | None = None
    """Port shaper toward the node, RouterOS `/interface ethernet switch port set <leg>
    egress-rate=...` (MikroTik "Bandwidth Control", CRS3xx/CRS5xx: the shaper queues what
    exceeds it); None: unlimited."""


@dataclass(frozen=True, slots=True)
class SwitchConfig:
    host: str
    legs: tuple[LegConfig, ...]
    board: str = "CRS804-4DDQ"
    version: str = "7.20.2 (stable)"
    bridge: str = "bridge"
    extra_bridge_ports: tuple[str, ...] = ()

    def leg(self, name: str) -> LegConfig:
        return next(leg for leg in self.legs if leg.name == name)

    def leg_of(self, node: str) -> LegConfig:
        return next(leg for leg in self.legs if leg.node == node)

    @property
    def hw_offload(self) -> bool:
        """The chip offloads one bridge of fabric ports; an unused sub-port in it breaks that."""
        return not self.extra_bridge_ports

    def interfaces(self) -> list[str]:
        """`ether1` plus every sub-interface of each QSFP56-DD cage in use, in print order."""
        cages: list[str] = []
        for leg in self.legs:
            m = _LEG.match(leg.name)
            cage = m.group("dd") if m else leg.name
            if cage not in cages:
                cages.append(cage)
        out = ["ether1"]
        for cage in cages:
            subs = [f"{cage}-{i}" for i in range(1, 9)]
            out += subs if any(leg.name in subs for leg in self.legs) else [cage]
        for leg in self.legs:
            if leg.name not in out:
                out.append(leg.name)
        return out

    def bridge_ports(self) -> list[str]:
        return [leg.name for leg in self.legs] + list(self.extra_bridge_ports)


def default_switch(cluster: Cluster) -> SwitchConfig:
    spec = cluster.spec.switch
    legs = []
    for i, node in enumerate(cluster.nodes):
        name = spec.ports.get(node.name) if spec else None
        if name is None:
            name = f"qsfp56-dd-{i // 2 + 1}-{1 if i % 2 == 0 else 5}"
        port = node.rails[0].port if node.rails else 1
        speed = LEG_LINK_MODES[cluster.link_speed_mbps(node.name, port)]
        legs.append(LegConfig(name=name, node=node.name, mtu=cluster.mtu, speed=speed))
    return SwitchConfig(host=spec.host if spec else "192.168.88.1", legs=tuple(legs))
