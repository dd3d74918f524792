"""Localization on generated faults: one faulty node or cable is named, and only it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric.measure.localize import Outcome, Role, localize
from pytest_sparkfabric.measure.schedule import Mode, Schedule, full, legs, over_cables

RAILS = (0, 1)


@dataclass(frozen=True)
class Fault:
    """A node (its NIC port, cable or leg) or a ring cable, broken in one or both directions
    (for a cable, `send` is nodes[0]->nodes[1]), on some rails."""

    nodes: tuple[str, ...]
    role: Role
    rails: frozenset[int]

    def breaks(self, src: str, dst: str, rail: int | None) -> bool:
        if rail is not None and rail not in self.rails:
            return False
        if len(self.nodes) == 2:
            a, b = self.nodes
            return (src, dst) == (a, b) or (self.role == "both" and (src, dst) == (b, a))
        x = self.nodes[0]
        return (self.role != "receive" and src == x) or (self.role != "send" and dst == x)


def measure(
    s: Schedule, fault: Fault, down: frozenset[str] = frozenset(), rails: tuple[int, ...] = RAILS
) -> list[Outcome]:
    """What a phase would report: every direction of every test, unless a node is down."""
    return [
        Outcome(a, b, not fault.breaks(a, b, r), r)
        for a, b in s.directed()
        if a not in down and b not in down
        for r in rails
    ]


roles = st.sampled_from(["send", "receive", "both"])
rail_sets = st.sets(st.sampled_from(RAILS), min_size=1).map(frozenset)
modes = st.sampled_from(["directed", "bidirectional"])


def _names(n: int) -> list[str]:
    return [f"spark-{i}" for i in range(1, n + 1)]


@given(st.integers(3, 128), st.data(), roles, rail_sets, modes)
def test_switch_node_fault_is_named(
    n: int, data: st.DataObject, role: Role, rails: frozenset[int], mode: Mode
) -> None:
    nodes = _names(n)
    x = data.draw(st.sampled_from(nodes))
    s = legs(nodes, mode)
    assert localize(measure(s, Fault(("nobody",), "both", frozenset(RAILS)))).lines() == []
    loc = localize(measure(s, Fault((x,), role, rails)))
    assert loc.undecided == ()
    [suspect] = loc.suspects
    assert (suspect.kind, suspect.nodes, suspect.role) == ("node", (x,), role)
    assert suspect.rails == tuple(sorted(rails))
    assert all(x in (o.src, o.dst) and not o.passed for o in suspect.failed)
    assert all(x not in (o.src, o.dst) and o.passed for o in suspect.cleared)
    assert "not its partners" in suspect.line()
    if n == 3:
        assert suspect.confirm == (), "at 3 nodes legs already met every partner"
        return
    met = {frozenset(d) for d in s.directed() if x in d}
    assert suspect.confirm and all(frozenset((t.src, t.dst)) not in met for t in suspect.confirm)
    # The phase runs the confirmation against a third partner; the suspect stands, confirmed.
    retest = loc.retests()
    again = localize(
        measure(s, Fault((x,), role, rails)) + measure(retest, Fault((x,), role, rails))
    )
    [confirmed] = again.suspects
    assert confirmed.nodes == (x,) and confirmed.confirmed and confirmed.confirm == ()
    assert again.undecided == ()


@given(st.integers(3, 128), st.data(), roles, rail_sets, modes, st.booleans())
def test_ring_or_mesh_fault_is_named(
    n: int, data: st.DataObject, role: Role, rails: frozenset[int], mode: Mode, on_cable: bool
) -> None:
    nodes = _names(n)
    cables = [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    s = over_cables(cables, mode)
    where: tuple[str, ...]
    if on_cable:
        a, b = data.draw(st.sampled_from(cables))
        role = "both" if role == "both" else "send"
        where = data.draw(st.sampled_from([(a, b), (b, a)]))
    else:
        where = (data.draw(st.sampled_from(nodes)),)
    loc = localize(measure(s, Fault(where, role, rails)), cables)
    assert loc.undecided == ()
    [suspect] = loc.suspects
    assert suspect.kind == ("cable" if on_cable else "node")
    if on_cable and role == "both":
        assert set(suspect.nodes) == set(where)
    else:
        assert suspect.nodes == where
    assert (suspect.role, suspect.rails) == (role, tuple(sorted(rails)))
    assert suspect.confirm == () and loc.retests().rounds == ()


@given(st.integers(4, 64), st.data())
def test_full_schedule_names_the_node_too(n: int, data: st.DataObject) -> None:
    nodes = _names(n)
    x = data.draw(st.sampled_from(nodes))
    [suspect] = localize(measure(full(nodes), Fault((x,), "both", frozenset(RAILS)))).suspects
    assert suspect.nodes == (x,) and suspect.confirmed and suspect.confirm == ()


@given(st.integers(5, 128), st.data(), roles)
def test_a_down_neighbour_leaves_it_undecided_until_the_retest(
    n: int, data: st.DataObject, role: Role
) -> None:
    """legs over all nodes, one of them down: its neighbour x keeps one partner, so the schedule
    cannot tell x from its path; the retest against a third partner does."""
    nodes = _names(n)
    i = data.draw(st.integers(0, n - 1))
    x, down = nodes[i], frozenset({nodes[(i + 1) % n]})
    s = legs(nodes)
    fault = Fault((x,), role, frozenset(RAILS))
    first = measure(s, fault, down)
    loc = localize(first)
    assert loc.suspects == ()
    [undecided] = loc.undecided
    assert undecided.nodes == (x,)
    assert undecided.retest and "Retest: " in undecided.line()
    retest = loc.retests()
    assert not set(retest.directed()) & set(s.directed())
    again = localize(first + measure(retest, fault, down))
    [suspect] = again.suspects
    assert (suspect.nodes, suspect.role) == ((x,), role) and again.undecided == ()


@pytest.mark.parametrize("where", [("spark-1",), ("spark-2",), ("spark-1", "spark-2")])
def test_two_nodes_cannot_be_told_apart(where: tuple[str, ...]) -> None:
    s = legs(_names(2))
    loc = localize(measure(s, Fault(where, "both", frozenset(RAILS))))
    assert loc.suspects == ()
    [undecided] = loc.undecided
    assert set(undecided.nodes) == {"spark-1", "spark-2"} and undecided.retest == ()
    assert undecided.line() == (
        "spark-1->spark-2 and spark-2->spark-1 (rail 0, rail 1): undecided: spark-1 has no "
        "passing test with a partner other than spark-2; spark-2 has no passing test with a "
        "partner other than spark-1, so the schedule cannot tell spark-1 and spark-2 from the "
        "path between spark-1 and spark-2. No test can tell: no third partner is free to test "
        "against."
    )


def test_everything_failing_is_common_not_a_node() -> None:
    nodes = _names(8)
    outs = [Outcome(a, b, False, 0) for a, b in legs(nodes).directed()]
    loc = localize(outs)
    assert loc.suspects == ()
    [common] = loc.undecided
    assert common.nodes == tuple(nodes) and common.retest == ()
    assert common.line() == (
        "16 directions, e.g. spark-1->spark-2 (rail 0): undecided: no test passed, so the fault "
        "is common to every node (the switch, its settings or the address plan) and cannot be "
        "placed on one."
    )


def test_messages() -> None:
    nodes = _names(8)
    s = legs(nodes)
    node = localize(measure(s, Fault(("spark-3",), "send", frozenset({1}))))
    assert node.lines() == [
        "spark-3 (rail 1): fails sending to spark-4 and spark-2, while spark-4 passes with "
        "spark-5 and spark-2 with spark-1: suspect spark-3 (its NIC port, its cable or its "
        "switch leg), not its partners. Confirm: spark-3->spark-1."
    ]
    path = localize(measure(full(nodes), Fault(("spark-2", "spark-5"), "both", frozenset({0}))))
    assert path.lines() == [
        "spark-2<->spark-5 (rail 0): fails both ways, while spark-2 passes with spark-7 and "
        "spark-5 with spark-4: suspect the switch between them, not a leg (forwarding, ARP, "
        "the address plan)."
    ]
    ring = [(nodes[i], nodes[(i + 1) % 8]) for i in range(8)]
    outs = measure(over_cables(ring), Fault(("spark-3", "spark-2"), "send", frozenset(RAILS)))
    assert localize(outs, ring).lines() == [
        "spark-3<->spark-2 (rail 0, rail 1): fails spark-3->spark-2 only, while spark-3 passes "
        "with spark-4 and spark-2 with spark-1: suspect this cable or its two ports; reseat or "
        "swap it."
    ]
    outs = measure(over_cables(ring), Fault(("spark-6",), "both", frozenset(RAILS)))
    assert (
        "suspect spark-6 itself (its NIC or its settings: both its cables fail)"
        in (localize(outs, ring).lines()[0])
    )


def test_pair_level_outcomes_and_intermittent_failures() -> None:
    nodes = _names(4)
    outs = [
        Outcome(o.src, o.dst, o.passed)
        for o in measure(legs(nodes), Fault(("x",), "both", frozenset()))
    ]
    assert localize(outs).lines() == []
    flaky = [*outs, Outcome("spark-2", "spark-3", False), Outcome("spark-2", "spark-1", False)]
    [suspect] = localize(flaky).suspects
    assert (suspect.nodes, suspect.role, suspect.rails) == (("spark-2",), "send", ())
