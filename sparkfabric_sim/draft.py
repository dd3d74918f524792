"""A simulated cluster while it is built: the nodes and cables that `inject` applies faults
to, frozen into the SimCluster's nodes afterwards (model -> inject -> draft, one way)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from sparkfabric_sim.hardware import Cable, LaneFault, Mgmt, Netdev, SimNode
from sparkfabric_sim.switch_config import SwitchConfig

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster


@dataclass
class NodeDraft:
    """A node while faults are being applied; frozen into a SimNode afterwards."""

    name: str
    index: int
    user: str
    home: str
    mgmt: Mgmt
    netdevs: dict[str, Netdev]
    sysctls: dict[str, str]
    files: dict[str, str]
    throttle_gbps: float | None = None
    pcie_width: dict[int, int] = field(default_factory=dict)
    dead_halves: set[tuple[int, int]] = field(default_factory=set)
    unreachable: bool = False
    hangs: set[str] = field(default_factory=set)
    host_pfc: set[int] = field(default_factory=set)
    rx_discard_pct: dict[str, float] = field(default_factory=dict)
    firmware: str | None = None
    firewall: bool = False
    missing: set[str] = field(default_factory=set)
    sudo_asks: bool = False
    reads_journal: bool = True
    lost_on: str | None = None

    def cabled(self) -> list[Netdev]:
        return [d for d in self.netdevs.values() if d.cabled]

    def cabled_ports(self) -> list[int]:
        return sorted({d.port for d in self.cabled()})

    def freeze(self) -> SimNode:
        order = sorted(self.netdevs.values(), key=lambda d: d.ifindex)
        return SimNode(
            name=self.name,
            index=self.index,
            user=self.user,
            home=self.home,
            mgmt=self.mgmt,
            netdevs=tuple(order),
            sysctls=MappingProxyType(dict(self.sysctls)),
            files=MappingProxyType(dict(self.files)),
            throttle_gbps=self.throttle_gbps,
            pcie_width=MappingProxyType(dict(self.pcie_width)),
            dead_halves=frozenset(self.dead_halves),
            unreachable=self.unreachable,
            hangs=frozenset(self.hangs),
            host_pfc=frozenset(self.host_pfc),
            rx_discard_pct=MappingProxyType(dict(self.rx_discard_pct)),
            firmware=self.firmware,
            firewall=self.firewall,
            missing=frozenset(self.missing),
            sudo_asks=self.sudo_asks,
            reads_journal=self.reads_journal,
            lost_on=self.lost_on,
        )


@dataclass
class Draft:
    cluster: Cluster
    seed: int
    nodes: dict[str, NodeDraft]
    cables: list[Cable]
    switch: SwitchConfig | None
    down_cables: set[str] = field(default_factory=set)
    flap_cables: set[str] = field(default_factory=set)
    """Cables whose link drops once during the first RDMA transfer over them (link_flap)."""
    lane_faults: list[LaneFault] = field(default_factory=list)
    pfc_nodes: set[str] = field(default_factory=set)
    no_lane_counters: set[tuple[str, int]] = field(default_factory=set)
    """(node, port) whose NIC lacks the per-lane counter capability (phy_counters_missing)."""
    nic_offset_c: dict[str, float] = field(default_factory=dict)
    """Node -> degrees its NIC runs above the normal thermal profile (hot_nic)."""
