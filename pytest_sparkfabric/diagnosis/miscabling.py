"""Miscabling solved as a whole (pure): the cables as LLDP found them (a lit port nobody names
holds its planned cable) against the plan. The differing cables fall into connected pieces, each
one mistake named by its shape (swap, moved, missing, extra); shapeless pieces sharing a box are
one mistake too (two boxes exchanged), or a ring in another order."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Literal

from pytest_sparkfabric import objects
from pytest_sparkfabric.objects import Obj

Kind = Literal["swap", "order", "moved", "missing", "extra"]


@dataclass(frozen=True, slots=True, order=True)
class End:
    """One end of a cable: a node port, or a switch port (`node` None, `leg` its name); both
    None: a far end nobody identified."""

    node: str | None
    port: int | None = None
    leg: str | None = None

    @property
    def text(self) -> str:
        if self.node is None:
            return f"switch port {self.leg}" if self.leg else "an unidentified far end"
        return f"{self.node} port {self.port}"

    @property
    def id(self) -> str:
        return f"switch:{self.leg or '?'}" if self.node is None else f"{self.node}:p{self.port}"


UNKNOWN = End(None)


@dataclass(frozen=True, slots=True, order=True)
class Wire:
    """One cable, `a` first as the plan lists it."""

    a: End
    b: End

    @property
    def id(self) -> str:
        return f"{self.a.id}<->{self.b.id}"

    @property
    def text(self) -> str:
        return f"{self.a.text} <-> {self.b.text}"

    @property
    def key(self) -> frozenset[End]:
        return frozenset((self.a, self.b))

    def far(self, end: End) -> End:
        return self.b if end == self.a else self.a


@dataclass(frozen=True, slots=True)
class Mistake:
    """One physical mistake: the planned cables it touches, those ends as found, the one fix."""

    kind: Kind
    planned: tuple[Wire, ...]
    found: tuple[Wire, ...]
    fix: str
    cause: str

    @property
    def nodes(self) -> tuple[str, ...]:
        ends = (e for w in (*self.planned, *self.found) for e in (w.a, w.b))
        return tuple(dict.fromkeys(e.node for e in ends if e.node is not None))

    @property
    def objects(self) -> tuple[Obj, ...]:
        """What it blames: the planned cables, and the ports off them its cables sit in."""
        ends = {e for w in self.planned for e in (w.a, w.b)}
        cables = [o for w in self.planned if (o := objects.parse(w.id)) is not None]
        ports = [
            objects.port(e.node, e.port)
            for w in self.found
            for e in (w.a, w.b)
            if e.node is not None and e.port is not None and e not in ends
        ]
        return tuple({o.id: o for o in (*cables, *ports)}.values())

    @property
    def seen(self) -> str:
        now = ", ".join(w.text for w in self.found) or "no cable"
        plan = ", ".join(w.text for w in self.planned) or "no cable there"
        return f"cabled {now}; cluster.yaml says {plan}"


def found_wires(
    planned: Sequence[Wire], seen: Mapping[End, End | None], lit: Collection[End]
) -> tuple[Wire, ...]:
    """The cables as found: the far ends LLDP names (`seen`), and each `lit` port it names
    none for: its planned cable where that far end is free, else the cable of a dark planned
    port (moved from there), else a cable to an unknown far end."""
    plan = {e: w.far(e) for w in planned for e in (w.a, w.b)}
    out: dict[frozenset[End], Wire] = {}
    for end, far in sorted(seen.items()):
        if far is not None:
            out.setdefault(frozenset((end, far)), Wire(*sorted((end, far))))
    taken = {e for w in out.values() for e in (w.a, w.b)}
    for end in sorted(set(lit)):
        if end in taken:
            continue
        far = plan.get(end)
        if far is None or far in taken or (far.node is not None and far not in lit):
            # A dark planned port whose far end nobody names: its cable, moved here (one of
            # the same box first).
            home = sorted(
                (p.node != end.node, p)
                for p in plan
                if p.node is not None and p not in lit and p not in taken
                if plan[p] not in taken and plan[p] not in lit
            )
            far = plan[home[0][1]] if home else UNKNOWN
        out[frozenset((end, far))] = Wire(end, far)
        taken |= {end, far} - {UNKNOWN}
    return tuple(out.values())


def solve(planned: Sequence[Wire], found: Sequence[Wire]) -> tuple[Mistake, ...]:
    """The mistakes that take `found` back to `planned` (one per piece of differing cables,
    pieces of no simple shape merged by box), each with its one fix."""
    have = {w.key for w in found}
    want = {w.key for w in planned}
    missing = [w for w in planned if w.key not in have]
    extra = [w for w in found if w.key not in want]
    shaped = [(p, _shape(*p)) for p in _pieces(missing, extra)]
    odd = _merge_by_box([p for p, m in shaped if m is None])
    return (*(m for _, m in shaped if m is not None), *(_odd(p, planned, found) for p in odd))


Piece = tuple[list[Wire], list[Wire]]


def _pieces(missing: Sequence[Wire], extra: Sequence[Wire]) -> list[Piece]:
    """The differing cables by connected piece (cables meet in a shared known port)."""
    root: dict[End, End] = {}

    def find(e: End) -> End:
        while root.setdefault(e, e) != e:
            e = root[e]
        return e

    for w in (*missing, *extra):
        ends = [e for e in (w.a, w.b) if e != UNKNOWN]
        for e in ends[1:]:
            root[find(e)] = find(ends[0])
    out: dict[End, Piece] = {}
    for w in missing:
        out.setdefault(find(w.a), ([], []))[0].append(w)
    for w in extra:
        out.setdefault(find(w.a if w.a != UNKNOWN else w.b), ([], []))[1].append(w)
    return list(out.values())


def _shape(planned: list[Wire], found: list[Wire]) -> Mistake | None:
    """The mistake a piece of one simple shape is, or None."""
    if not found:
        ends = ", ".join(w.text for w in planned)
        fix = f"connect {ends} (no cable or no link there: plug it in, reseat or replace it)"
        return Mistake("missing", tuple(planned), (), fix, "no cable where cluster.yaml plans one")
    if not planned:
        fix = f"remove the cable {', '.join(w.text for w in found)}: cluster.yaml plans none there"
        return Mistake("extra", (), tuple(found), fix, "a cable cluster.yaml does not plan")
    if len(planned) == len(found) == 1:
        p, f = planned[0], found[0]
        shared = p.key & f.key
        if len(shared) == 1:
            (kept,) = shared
            now, home = f.far(kept), p.far(kept)
            fix = f"move the cable from {now.text} to {home.text}" + (
                f" (its other end stays in {kept.text})" if now.node != home.node else ""
            )
            cause = f"the cable of {kept.text} sits in {now.text}, not {home.text}"
            return Mistake("moved", (p,), (f,), fix, cause)
    two = len(planned) == len(found) == 2
    for u, v in permutations({e for w in planned for e in (w.a, w.b)} if two else (), 2):
        swap = {u: v, v: u}
        moved = {frozenset(swap.get(e, e) for e in (w.a, w.b)) for w in planned}
        if u.node is not None and u.node == v.node and moved == {w.key for w in found}:
            low, high = sorted((u.port or 0, v.port or 0))
            fix = f"exchange the two cables in {u.node} port {low} and port {high}"
            cause = f"the two cables of {u.node} sit in each other's port"
            return Mistake("swap", tuple(planned), tuple(found), fix, cause)
    return None


def _merge_by_box(pieces: Sequence[Piece]) -> list[Piece]:
    """Pieces of no simple shape that share a box, as one."""
    groups: list[tuple[list[Wire], list[Wire], set[str]]] = []
    for planned, found in pieces:
        boxes = {e.node for w in (*planned, *found) for e in (w.a, w.b) if e.node is not None}
        want, now = [*planned], [*found]
        for g in [g for g in groups if g[2] & boxes]:
            want, now, boxes = [*g[0], *want], [*g[1], *now], g[2] | boxes
            groups.remove(g)
        groups.append((want, now, boxes))
    return [(sorted(p), sorted(f)) for p, f, _ in groups]


def _ring_order(wires: Sequence[Wire]) -> list[str] | None:
    """The boxes in the order the cables run (port 0 to port 1 of the next), if they close one
    ring over every box of `wires`."""
    nxt = {str(w.a.node): str(w.b.node) for w in wires if (w.a.port, w.b.port) == (0, 1)}
    nxt |= {str(w.b.node): str(w.a.node) for w in wires if (w.b.port, w.a.port) == (0, 1)}
    boxes = {e.node for w in wires for e in (w.a, w.b)}
    if not wires or None in boxes or len(nxt) != len(wires):
        return None
    order = [min(nxt)]
    while (step := nxt.get(order[-1])) not in (None, order[0]) and len(order) < len(nxt):
        order.append(str(step))
    return order if step == order[0] and set(order) == boxes else None


def _odd(piece: Piece, planned: Sequence[Wire], found: Sequence[Wire]) -> Mistake:
    """A piece of no simple shape: the ring in another order, or cables moved between boxes."""
    want, now = piece
    at = {e: w.far(e) for w in now for e in (w.a, w.b)}
    runs = []
    for w in want:
        near, far = (w.a, w.b) if w.a in at or w.b not in at else (w.b, w.a)
        runs.append(
            f"{near.text} meets {far.text}" + (f" (now {at[near].text})" if near in at else "")
        )
    ends = {e for w in want for e in (w.a, w.b)}
    runs += [f"the cable {w.text} is removed" for w in now if not {w.a, w.b} & ends]
    moves = ", ".join(runs)
    order = [str(w.a.node) for w in planned] if _ring_order(planned) else None
    if order is not None and all({w.a.port, w.b.port} == {0, 1} for w in now):
        cabled = _ring_order(found)
        fix = f"re-cable the ring in the order {', '.join(order)}: move the cables so that {moves}"
        how = f" ({', '.join(cabled)})" if cabled else ""
        cause = f"the boxes are cabled in another order{how} than cluster.yaml lists them"
        return Mistake("order", tuple(want), tuple(now), fix, cause)
    cause = "cables sit in other boxes or ports than cluster.yaml says"
    return Mistake("moved", tuple(want), tuple(now), f"move the cables so that {moves}", cause)
