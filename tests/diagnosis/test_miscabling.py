"""The miscabling solver: random plans, random physical mistakes, LLDP as a node would see it;
the solved fixes restore the plan with no more mistakes than were made."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.diagnosis.miscabling import End, Mistake, Wire, found_wires, solve

Cables = list[Wire]
Draw = Callable[[Sequence[object]], object]


def ring(n: int) -> Cables:
    names = [f"spark-{i + 1}" for i in range(n)]
    return [Wire(End(names[i], 0), End(names[(i + 1) % n], 1)) for i in range(n)]


def direct(port: int) -> Cables:
    return [Wire(End("spark-1", port), End("spark-2", port))]


def switch(ports: list[int]) -> Cables:
    return [Wire(End(f"spark-{i + 1}", p), End(None, leg=f"leg-{i}")) for i, p in enumerate(ports)]


def seen_by_lldp(cables: Cables) -> dict[End, End | None]:
    """What the nodes see: LLDP names a node at the far end, never a switch leg; every cabled
    node port is lit (the keys)."""
    return {
        e: (w.far(e) if w.far(e).node is not None else None)
        for w in cables
        for e in (w.a, w.b)
        if e.node is not None
    }


def solved(plan: Cables, cables: Cables) -> tuple[Cables, tuple[Mistake, ...]]:
    seen = seen_by_lldp(cables)
    found = list(found_wires(plan, seen, set(seen)))
    return found, solve(plan, found)


# -- perturbations: each takes the cables, a random draw and the boxes, returns them as cabled --


def _free(cables: Cables, boxes: list[str]) -> list[End]:
    used = {e for w in cables for e in (w.a, w.b)}
    return [End(b, p) for b in boxes for p in (0, 1) if End(b, p) not in used]


def swap_at_box(cables: Cables, pick: Draw, boxes: list[str]) -> Cables:
    box = str(pick(boxes))
    x = {End(box, 0): End(box, 1), End(box, 1): End(box, 0)}
    return [Wire(x.get(w.a, w.a), x.get(w.b, w.b)) for w in cables]


def exchange_boxes(cables: Cables, pick: Draw, boxes: list[str]) -> Cables:
    one = str(pick(boxes))
    other = str(pick([b for b in boxes if b != one]))
    x = {one: other, other: one}

    def moved(e: End) -> End:
        return End(x.get(str(e.node), e.node), e.port, e.leg) if e.node else e

    return [Wire(moved(w.a), moved(w.b)) for w in cables]


def unplug(cables: Cables, pick: Draw, boxes: list[str]) -> Cables:
    gone = pick(cables) if cables else None
    return [w for w in cables if w != gone]


def move_end(cables: Cables, pick: Draw, boxes: list[str]) -> Cables:
    free = _free(cables, boxes)
    if not cables or not free:
        return cables
    w, to = pick(cables), pick(free)
    assert isinstance(w, Wire) and isinstance(to, End)
    moved = Wire(to, w.b) if w.a.node is not None else Wire(w.a, to)
    return [moved if c == w else c for c in cables]


def add_extra(cables: Cables, pick: Draw, boxes: list[str]) -> Cables:
    free = _free(cables, boxes)
    a = pick(free) if len(free) >= 2 else None
    b = pick([e for e in free if e != a and e.node != getattr(a, "node", None)] or [None])
    return [*cables, Wire(a, b)] if isinstance(a, End) and isinstance(b, End) else cables


NODE_SIDE = [swap_at_box, unplug, move_end, add_extra]


@st.composite
def topologies(draw: st.DrawFn) -> tuple[str, Cables]:
    kind = draw(st.sampled_from(["direct", "triangle", "ring", "switch"]))
    if kind == "direct":
        return kind, direct(draw(st.sampled_from([0, 1])))
    if kind in ("triangle", "ring"):
        return kind, ring(3 if kind == "triangle" else draw(st.integers(4, 8)))
    n = draw(st.integers(2, 4))
    return kind, switch(draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n)))


def restore(found: Iterable[Wire], mistakes: Iterable[Mistake]) -> frozenset[frozenset[End]]:
    """The cabling once every mistake's fix is done."""
    out = {w.key for w in found}
    for m in mistakes:
        out -= {w.key for w in m.found}
        out |= {w.key for w in m.planned}
    return frozenset(out)


def _boxes(cables: Cables) -> list[str]:
    return sorted({e.node for w in cables for e in (w.a, w.b) if e.node is not None})


@settings(max_examples=400, deadline=None)
@given(topologies(), st.data())
def test_the_solved_fixes_restore_the_plan_with_no_more_mistakes_than_made(
    topo: tuple[str, Cables], data: st.DataObject
) -> None:
    kind, plan = topo
    moves = [*NODE_SIDE, exchange_boxes] if kind in ("ring", "triangle") else NODE_SIDE
    done = data.draw(st.lists(st.sampled_from(moves), max_size=3))
    cables = list(plan)
    for step in done:
        cables = step(cables, lambda xs: data.draw(st.sampled_from(xs)), _boxes(plan))
    found, mistakes = solved(plan, cables)
    assert restore(found, mistakes) == {w.key for w in plan}, mistakes
    assert len(mistakes) <= len(done), (done, mistakes)
    if kind != "switch":
        # Without switch legs LLDP names every far end: the cables as found are the cables.
        assert {w.key for w in found} == {w.key for w in cables}
    assert all(m.fix and m.cause and (m.planned or m.found) for m in mistakes)


@settings(max_examples=100, deadline=None)
@given(topologies(), st.data())
def test_cabled_as_planned_is_no_mistake_wherever_lldp_names_nothing(
    topo: tuple[str, Cables], data: st.DataObject
) -> None:
    _, plan = topo
    deaf = data.draw(st.sets(st.sampled_from(_boxes(plan))))
    seen = seen_by_lldp(plan)
    found = found_wires(plan, {e: (None if e.node in deaf else f) for e, f in seen.items()}, seen)
    assert {w.key for w in found} == {w.key for w in plan}
    assert solve(plan, found) == ()


EXTRA = Wire(End("spark-1", 0), End("spark-2", 0))
TWO_BOXES = iter(["spark-2", "spark-3"])
# Its fix and objects on the simulator: tests/measure/test_cabling.py.
EXAMPLES = {
    "swap": (ring(4), swap_at_box(ring(4), lambda xs: "spark-2", []), "swap", {
        "seen": "cabled spark-1 port 0 <-> spark-2 port 0, spark-2 port 1 <-> spark-3 port 1; "
        "cluster.yaml says spark-1 port 0 <-> spark-2 port 1, spark-2 port 0 <-> spark-3 port 1",
        "fix": "exchange the two cables in spark-2 port 0 and port 1"}),
    "ring order": (ring(4), exchange_boxes(ring(4), lambda xs: next(TWO_BOXES), []), "order", {
        "fix": "re-cable the ring in the order spark-1, spark-2, spark-3, spark-4: move the cables "
        "so that spark-1 port 0 meets spark-2 port 1 (now spark-3 port 1), spark-2 port 0 meets "
        "spark-3 port 1 (now spark-4 port 1), spark-3 port 0 meets spark-4 port 1 (now spark-2 "
        "port 1)",
        "cause": "the boxes are cabled in another order (spark-1, spark-3, spark-2, spark-4) than "
        "cluster.yaml lists them"}),
    "switch node in its other port": (
        switch([1, 1]), [Wire(End("spark-1", 0), End(None, leg="leg-0")), switch([1, 1])[1]],
        "moved", {"fix": "move the cable from spark-1 port 0 to spark-1 port 1"}),
    "missing": (direct(1), [], "missing", {
        "fix": "connect spark-1 port 1 <-> spark-2 port 1 (no cable or no link there: plug it in, "
        "reseat or replace it)", "planned": tuple(direct(1))}),
    "extra": (direct(1), [*direct(1), EXTRA], "extra", {
        "fix": "remove the cable spark-1 port 0 <-> spark-2 port 0: cluster.yaml plans none there",
        "found": (EXTRA,)}),
}  # fmt: skip


@pytest.mark.parametrize(("plan", "cabled", "kind", "says"), EXAMPLES.values(), ids=EXAMPLES)
def test_each_shape_of_mistake_says_what_is_cabled_and_its_fix(
    plan: Cables, cabled: Cables, kind: str, says: dict[str, object]
) -> None:
    (m,) = solved(plan, cabled)[1]
    assert m.kind == kind
    assert {k: getattr(m, k) for k in says} == says
