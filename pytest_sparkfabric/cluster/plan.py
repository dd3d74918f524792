"""What a valid cluster is made of, per topology: cables, links, node pairs, subnets (pure;
DOMAIN.md §2). The suite parametrises its tests over these."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from ipaddress import IPv4Network
from itertools import combinations, pairwise

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.model import Cluster, Rail

NODE_COUNTS = {"direct": (2, 2), "mesh": (3, 3), "ring": (4, 1024), "switch": (2, 128)}
"""Node counts per topology. A ring has no limit of its own (1024 stands for "any": its /24s run
out first); behind a switch the limit is the switch's legs, one per node, and 128 is two
128-leg breakout switches' worth, past which the rounds and the report are untested."""
NVIDIA_SWITCH_NODES = 8
"""The most Sparks behind one switch NVIDIA supports (its 8-node announcement); more is a
warning from `sparkfabric check`, not an error."""
PORTS_PER_NODE = {"direct": 1, "mesh": 2, "ring": 2, "switch": 1}


@dataclass(frozen=True, slots=True)
class Cable:
    """A QSFP cable between two node ports, or a node port and a switch port."""

    a_node: str
    a_port: int
    b_node: str | None
    b_port: int | str | None

    @property
    def id(self) -> str:
        b = f"{self.b_node}:p{self.b_port}" if self.b_node else f"switch:{self.b_port}"
        return f"{self.a_node}:p{self.a_port}<->{b}"


@dataclass(frozen=True, slots=True)
class Link:
    """Two rail interfaces that must reach each other (one subnet)."""

    a: Rail
    b: Rail
    rail: int

    @property
    def subnet(self) -> IPv4Network:
        return self.a.address.network

    @property
    def id(self) -> str:
        return f"{self.a.id}<->{self.b.id}"

    def nodes(self) -> tuple[str, str]:
        return (self.a.node, self.b.node)


@dataclass(frozen=True, slots=True)
class DirectedLink:
    src: Rail
    dst: Rail

    @property
    def id(self) -> str:
        return f"{self.src.id}->{self.dst.id}"


@dataclass(frozen=True, slots=True)
class NodePair:
    a: str
    b: str
    links: tuple[Link, ...]

    @property
    def id(self) -> str:
        return f"{self.a}<->{self.b}"


@dataclass(frozen=True)
class Plan:
    topology: str
    cables: tuple[Cable, ...]
    links: tuple[Link, ...]
    subnets: tuple[IPv4Network, ...]

    # Computed once per plan: collection reads them once per parametrised test (issue 27).
    @cached_property
    def directed(self) -> tuple[DirectedLink, ...]:
        return tuple(
            d for ln in self.links for d in (DirectedLink(ln.a, ln.b), DirectedLink(ln.b, ln.a))
        )

    @cached_property
    def pairs(self) -> tuple[NodePair, ...]:
        grouped: dict[tuple[str, str], list[Link]] = defaultdict(list)
        for link in self.links:
            grouped[link.nodes()].append(link)
        return tuple(NodePair(a, b, tuple(ls)) for (a, b), ls in grouped.items())


def cables(cluster: Cluster) -> tuple[Cable, ...]:
    nodes, topo, sw = cluster.nodes, cluster.topology, cluster.spec.switch
    if topo == "direct" and len(nodes) == 2 and nodes[0].ports:
        return (Cable(nodes[0].name, nodes[0].ports[0], nodes[1].name, nodes[0].ports[0]),)
    if topo in ("ring", "mesh"):
        return tuple(Cable(a.name, 0, b.name, 1) for a, b in pairwise((*nodes, *nodes[:1])))
    if topo == "switch":
        legs = sw.ports if sw else {}
        return tuple(Cable(n.name, n.ports[0], None, legs.get(n.name)) for n in nodes if n.ports)
    return ()


def plan(cluster: Cluster) -> Plan:
    """Links and subnets of a cluster that passed `check` (stable order)."""
    nodes, rails = cluster.nodes, range(hardware.RAILS_PER_PORT)
    if cluster.topology in ("direct", "switch"):
        links = [
            Link(x.rail(x.ports[0], r), y.rail(y.ports[0], r), r)
            for r in rails
            for x, y in combinations(nodes, 2)
        ]
    else:
        pairs = pairwise((*nodes, *nodes[:1]))
        links = [Link(a.rail(0, r), b.rail(1, r), r) for a, b in pairs for r in rails]
    subnets = tuple(dict.fromkeys(link.subnet for link in links))  # in order, each once
    return Plan(cluster.topology, cables(cluster), tuple(links), subnets)


ITEM_KINDS: dict[str, str] = {
    "node": "per node",
    "rail": "per rail netdev",
    "roce_device": "per RoCE device",
    "link": "per link (two rails in one subnet)",
    "directed_link": "per directed link",
    "node_pair": "per node pair",
    "switch": "per switch",
}


def item_counts(cluster: Cluster) -> dict[str, int]:
    """How many test items one test function of each parametrisation kind collects."""
    p, rails = plan(cluster), len(cluster.rails)
    counts = (len(cluster.nodes), rails, rails, len(p.links), len(p.directed), len(p.pairs))
    return dict(zip(ITEM_KINDS, (*counts, int(cluster.spec.switch is not None)), strict=True))
