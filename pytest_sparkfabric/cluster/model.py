"""The frozen, read-only view of a valid cluster that every other stage uses: Cluster, Node, Rail.

Built from a validated `ClusterSpec` by `build_nodes` (rail names default to the Spark's own,
`hardware.py`); `load.py` builds it, `plan.py` derives the links from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Interface
from pathlib import Path

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.source import Located, Path_
from pytest_sparkfabric.cluster.spec import ClusterSpec, SshSpec, TopologyName


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


def build_nodes(spec: ClusterSpec) -> tuple[Node, ...]:
    nodes = []
    for n in spec.nodes:
        multi = len(n.ports) > 1
        rails = []
        for port in sorted(n.ports):
            for index, rs in enumerate(n.ports[port]):
                std = hardware.rail_names(port, index)
                rails.append(
                    Rail(
                        node=n.name,
                        port=port,
                        index=index,
                        address=rs.address,
                        netdev=rs.netdev or std.netdev,
                        rdma=rs.rdma or std.rdma,
                        pci=std.pci,
                        multi_port=multi,
                    )
                )
        nodes.append(Node(name=n.name, ssh=n.ssh, rails=tuple(rails)))
    return tuple(nodes)
