"""Object ids as the suite spells them, read back into what they name (pure).

    node        spark-1
    port        spark-1:p0
    rail        spark-1:p0rail1   (a node with one cabled port: spark-1:rail1)
    switch leg  switch:qsfp56-dd-1-1
    link        spark-1:p0rail1<->spark-2:p1rail1   (both directions of one rail)
    direction   spark-1:p0rail1->spark-2:p1rail1
    cable       spark-1:p0<->spark-2:p1   or   spark-1:p1<->switch:qsfp56-dd-1-1
    pair        spark-1<->spark-2   (both rails of two nodes)

Node names cannot hold `:`, `<` or `>` (cluster.yaml's name rule), so the split is unambiguous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["node", "port", "rail", "leg", "link", "direction", "cable", "pair"]

_RAIL = re.compile(r"^(?:p(?P<port>\d+))?rail(?P<rail>\d+)$")
_PORT = re.compile(r"^p(?P<port>\d+)$")


@dataclass(frozen=True, slots=True)
class Point:
    """One end of what an id names: a node (port and rail when known) or a switch leg."""

    node: str | None
    port: int | None = None
    rail: int | None = None
    leg: str | None = None


@dataclass(frozen=True, slots=True)
class Ref:
    kind: Kind
    points: tuple[Point, ...]

    @property
    def rail(self) -> int | None:
        rails = {p.rail for p in self.points if p.rail is not None}
        return rails.pop() if len(rails) == 1 else None

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(p.node for p in self.points if p.node is not None)


def _point(text: str) -> tuple[Kind, Point] | None:
    name, sep, rest = text.partition(":")
    if not name:
        return None
    if not sep:
        return "node", Point(name)
    if name == "switch":
        return ("leg", Point(None, leg=rest)) if rest else None
    if m := _RAIL.match(rest):
        port = int(m["port"]) if m["port"] is not None else None
        return "rail", Point(name, port, int(m["rail"]))
    if m := _PORT.match(rest):
        return "port", Point(name, int(m["port"]))
    return None


_JOINED: dict[tuple[str, Kind, Kind], Kind] = {
    ("<->", "rail", "rail"): "link",
    ("->", "rail", "rail"): "direction",
    ("<->", "port", "port"): "cable",
    ("<->", "port", "leg"): "cable",
    ("<->", "node", "node"): "pair",
    ("->", "node", "node"): "direction",
}


def parse(text: str) -> Ref | None:
    """What an id names, or None for text that is no object id."""
    for sep in ("<->", "->"):
        if sep in text:
            left, _, right = text.partition(sep)
            a, b = _point(left), _point(right)
            if a is None or b is None:
                return None
            kind = _JOINED.get((sep, a[0], b[0]))
            return Ref(kind, (a[1], b[1])) if kind else None
    one = _point(text)
    if one is None:
        return None
    return Ref(one[0], (one[1],))
