"""The objects a finding or an item is about: one id grammar (node `spark-1`, port `spark-1:p0`,
rail `spark-1:p0rail1`, leg `switch:qsfp56-dd-1-1`, cable `spark-1:p0<->spark-2:p1`, link `a<->b`,
direction `a->b`, pair `spark-1<->spark-2`), one model (pure). A cause explains an item only
where their objects meet: share a `Spot` (a node covers its ports and rails, a port its rails)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.model import Cluster, Rail
    from pytest_sparkfabric.cluster.plan import Cable, DirectedLink, Link, Plan

Kind = Literal["cluster", "node", "port", "rail", "leg", "cable", "link", "direction", "pair"]
Blame = Literal["cable", "node", "leg"]


@dataclass(frozen=True, slots=True)
class Spot:
    """A place on the fabric: a node (port and rail None: all of them), or a switch leg."""

    node: str | None
    port: int | None = None
    rail: int | None = None
    leg: str | None = None

    def meets(self, other: Spot) -> bool:
        if self.leg is not None or other.leg is not None:
            return self.leg == other.leg
        pairs = ((self.port, other.port), (self.rail, other.rail))
        return self.node == other.node and all(a is None or b is None or a == b for a, b in pairs)


@dataclass(frozen=True, slots=True)
class Obj:
    """One object by its id, with the places it occupies; kind `cluster` is everywhere."""

    id: str
    kind: Kind
    spots: tuple[Spot, ...] = ()

    def meets(self, other: Obj) -> bool:
        if "cluster" in (self.kind, other.kind):
            return True
        return any(a.meets(b) for a in self.spots for b in other.spots)

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.node for s in self.spots if s.node is not None))

    @property
    def rail(self) -> int | None:
        """The one rail index the object is on, if it is on exactly one."""
        rails = {s.rail for s in self.spots if s.rail is not None}
        return rails.pop() if len(rails) == 1 else None


CLUSTER = Obj("the cluster", "cluster")
SWITCH = Obj("switch", "cluster")
"""The switch itself (its bridge, its CPU, its QoS): on the path of every item behind it."""


def meet(a: Sequence[Obj], b: Sequence[Obj]) -> bool:
    """Whether two sets of objects share a place; an empty set is the whole cluster."""
    return not a or not b or any(x.meets(y) for x in a for y in b)


def ids(objects: Iterable[Obj]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(o.id for o in objects))


def node(name: str) -> Obj:
    return Obj(name, "node", (Spot(name),))


def port(name: str, number: int) -> Obj:
    return Obj(f"{name}:p{number}", "port", (Spot(name, number),))


def rail(r: Rail) -> Obj:
    return Obj(r.id, "rail", (Spot(r.node, r.port, r.index),))


def leg(name: str) -> Obj:
    return Obj(f"switch:{name}", "leg", (Spot(None, leg=name),))


def cable(c: Cable) -> Obj:
    spots = [Spot(c.a_node, c.a_port)]
    if c.b_node is not None and isinstance(c.b_port, int):
        spots.append(Spot(c.b_node, c.b_port))
    elif c.b_port is not None:
        spots.append(Spot(None, leg=str(c.b_port)))
    return Obj(c.id, "cable", tuple(spots))


def link(x: Link) -> Obj:
    return Obj(x.id, "link", (*rail(x.a).spots, *rail(x.b).spots))


def direction(d: DirectedLink) -> Obj:
    return Obj(d.id, "direction", (*rail(d.src).spots, *rail(d.dst).spots))


def cable_of(plan: Plan, node_name: str, port_number: int) -> Obj | None:
    """The cable plugged into a node's port, if cluster.yaml cables it."""
    end = (node_name, port_number)
    return next(
        (cable(c) for c in plan.cables if end in ((c.a_node, c.a_port), (c.b_node, c.b_port))), None
    )


def blamed_as(what: Blame, plan: Plan, nodes: Sequence[str], on: Sequence[Obj]) -> tuple[Obj, ...]:
    """What a fault seen on the rails or links `on` is about: the cables they run over, the
    nodes (`nodes` where the finding names them, else those of `on`), or the switch legs
    toward those nodes, with the nodes (a leg alone meets no rail); empty where there is none."""
    if what == "cable":
        spots = dict.fromkeys((s.node, s.port) for o in on for s in o.spots)
        found = [cable_of(plan, n, p) for n, p in spots if n is not None and p is not None]
        return tuple({c.id: c for c in found if c is not None}.values())
    names = tuple(nodes) or tuple(dict.fromkeys(n for o in on for n in o.nodes))
    legs = [
        leg(str(c.b_port))
        for n in names
        for c in plan.cables
        if c.a_node == n and c.b_node is None and c.b_port is not None
    ]
    if what == "node":
        return tuple(map(node, names))
    return (*legs, *map(node, names)) if legs else ()


def path(value: object) -> tuple[Obj, ...]:
    """The objects on the path of one parameter of a test item (a node, a rail, a link, a
    direction or a node pair). Rails at both ends suffice: a cable's ends are ports, which meet
    every rail of theirs, while a fault of one rail (a dead PCIe half) meets only that rail."""
    from pytest_sparkfabric.cluster.model import Node, Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink, Link, NodePair

    if isinstance(value, Node):
        return (node(value.name),)
    if isinstance(value, Rail):
        return (rail(value),)
    if isinstance(value, DirectedLink):
        return (direction(value),)
    if isinstance(value, Link):
        return (link(value),)
    if isinstance(value, NodePair):
        spots = tuple(s for x in value.links for r in (x.a, x.b) for s in rail(r).spots)
        return (Obj(value.id, "pair", spots),)
    return ()


def rail_by_netdev(cluster: Cluster, node_name: str, netdev: str) -> Obj | None:
    return next((rail(r) for r in cluster.rails if (r.node, r.netdev) == (node_name, netdev)), None)


_RAIL = re.compile(r"^(?:p(?P<port>\d+))?rail(?P<rail>\d+)$")
_PORT = re.compile(r"^p(?P<port>\d+)$")
_JOINED: dict[tuple[str, Kind, Kind], Kind] = {
    ("<->", "rail", "rail"): "link", ("->", "rail", "rail"): "direction",
    ("<->", "port", "port"): "cable", ("<->", "port", "leg"): "cable",
    ("<->", "node", "node"): "pair", ("->", "node", "node"): "direction",
}  # fmt: skip


def _end(text: str) -> tuple[Kind, Spot] | None:
    name, sep, rest = text.partition(":")
    if not name:
        return None
    if not sep:
        return "node", Spot(name)
    if name == "switch":
        return ("leg", Spot(None, leg=rest)) if rest else None
    if m := _RAIL.match(rest):
        return "rail", Spot(name, int(m["port"]) if m["port"] else None, int(m["rail"]))
    if m := _PORT.match(rest):
        return "port", Spot(name, int(m["port"]))
    return None


def parse(text: str) -> Obj | None:
    """What an id names (node names cannot hold `:`, `<` or `>`), or None for other text."""
    if text in (CLUSTER.id, SWITCH.id):
        return CLUSTER if text == CLUSTER.id else SWITCH
    sep = next((s for s in ("<->", "->") if s in text), None)
    if sep is None:
        one = _end(text)
        return Obj(text, one[0], (one[1],)) if one else None
    left, _, right = text.partition(sep)
    a, b = _end(left), _end(right)
    kind = _JOINED.get((sep, a[0], b[0])) if a and b else None
    return Obj(text, kind, (a[1], b[1])) if kind and a and b else None
