"""The frozen view of a valid cluster every other stage reads (Cluster, Node, Rail), and the
thresholds it is judged by: the defaults with cluster.yaml's overrides, each saying its source."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Interface
from pathlib import Path

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.source import Located, Path_
from pytest_sparkfabric.cluster.spec import (
    LINK_SPEEDS_MBPS,
    ClusterSpec,
    NodeSpec,
    SshSpec,
    TopologyName,
)
from pytest_sparkfabric.cluster.thresholds import Threshold, ThresholdName, defaults, message_bytes


@dataclass(frozen=True, slots=True)
class Rail:
    """One fabric netdev of one node (a PCIe half of one QSFP port)."""

    node: str
    port: int
    index: int
    address: IPv4Interface
    netdev: str
    rdma: str
    pci: str
    multi_port: bool
    link_speed_mbps: int = hardware.LINK_SPEED_MBPS
    """The speed its link is declared to run at (`Cluster.link_speed_mbps`), as ethtool says."""

    @property
    def label(self) -> str:
        return f"p{self.port}rail{self.index}" if self.multi_port else f"rail{self.index}"

    @property
    def id(self) -> str:
        return f"{self.node}:{self.label}"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    ssh: SshSpec | None
    rails: tuple[Rail, ...]

    @property
    def ports(self) -> tuple[int, ...]:
        return tuple(sorted({r.port for r in self.rails}))

    def rails_of(self, port: int) -> tuple[Rail, ...]:
        return tuple(r for r in self.rails if r.port == port)

    def rail(self, port: int, index: int) -> Rail:
        return next(r for r in self.rails if r.port == port and r.index == index)


@dataclass(frozen=True)
class Cluster:
    spec: ClusterSpec
    source: Path | None
    nodes: tuple[Node, ...]
    located: Located | None = field(default=None, compare=False, repr=False)

    @property
    def topology(self) -> TopologyName:
        return self.spec.topology

    @property
    def mtu(self) -> int:
        return self.spec.mtu

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def rails(self) -> tuple[Rail, ...]:
        return tuple(r for n in self.nodes for r in n.rails)

    def line_of(self, path: Path_) -> int | None:
        return self.located.line_of(path) if self.located else None

    def link_speed_mbps(self, node: str, port: int) -> int:
        """The declared speed of `port` of `node` in Mb/s: the node port's own `link_speed`,
        else its switch leg's, else the cluster's. KeyError for a node not in the file."""
        return _link_speed_mbps(self.spec, self.node(node).name, port)

    def approved_cable(self, vendor: str, part: str) -> bool:
        """Whether a module's EEPROM vendor name and part number are on `cables.approved`:
        each starts with an entry's (case and the EEPROM's padding spaces ignored)."""
        v, p = vendor.strip().casefold(), part.strip().casefold()
        return any(
            v.startswith(c.vendor.strip().casefold()) and p.startswith(c.part.strip().casefold())
            for c in self.spec.cables.approved
        )


def _link_speed_mbps(spec: ClusterSpec, node: str, port: int) -> int:
    own = next(
        (s for n in spec.nodes if n.name == node for p, s in n.link_speed.items() if p == port),
        None,
    )
    sw = spec.switch
    leg = sw.link_speed.get(sw.ports.get(node, "")) if sw is not None else None
    return LINK_SPEEDS_MBPS[own or leg or spec.link_speed]


def build_nodes(spec: ClusterSpec) -> tuple[Node, ...]:
    return tuple(Node(n.name, n.ssh, tuple(_rails(spec, n))) for n in spec.nodes)


def _rails(spec: ClusterSpec, n: NodeSpec) -> Iterator[Rail]:
    for port in sorted(n.ports):
        speed = _link_speed_mbps(spec, n.name, port)
        for index, rs in enumerate(n.ports[port]):
            std = hardware.rail_names(port, index)
            netdev, rdma, multi = rs.netdev or std.netdev, rs.rdma or std.rdma, len(n.ports) > 1
            yield Rail(n.name, port, index, rs.address, netdev, rdma, std.pci, multi, speed)


def resolve(cluster: Cluster) -> Mapping[ThresholdName, Threshold]:
    """Defaults for this cluster with cluster.yaml's overrides applied."""
    spec = cluster.spec
    size, directions = message_bytes(spec.nccl.size), spec.bandwidth.directions
    table = defaults(cluster.topology, len(cluster.nodes), size, directions)
    src = str(cluster.source.name) if cluster.source else "cluster.yaml"
    for name, value in spec.thresholds.items():
        t, line = table[name], cluster.line_of(("thresholds", name))
        where = f"set in {src}:{line}" if line else f"set in {src}"
        table[name] = Threshold(name, value, t.kind, t.unit, where, fixed=True)
    return table


def declared_mbps(*rails: Rail) -> int:
    """The declared speed a measurement over these rails is judged at: the slowest of them."""
    return min(r.link_speed_mbps for r in rails)
