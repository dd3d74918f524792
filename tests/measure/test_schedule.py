"""The schedules: every leg or cable both ways, node-disjoint rounds, the fewest rounds; and the
round scheduler of arbitrary pairs (every pair exactly once, few rounds)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import combinations, permutations
from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric.measure.schedule import (
    Mode,
    Schedule,
    build,
    cable_stress,
    full,
    legs,
    over_cables,
    rounds,
    stress,
    tournament,
)

modes = st.sampled_from(["directed", "bidirectional"])


@st.composite
def node_names(draw: st.DrawFn, low: int = 2, high: int = 128) -> list[str]:
    n = draw(st.integers(min_value=low, max_value=high))
    ids = draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n, unique=True))
    return [f"spark-{i}" for i in ids]


def _assert_disjoint(groups: Sequence[Sequence[tuple[Hashable, Hashable]]]) -> None:
    for k, pairs in enumerate(groups, 1):
        busy = [n for p in pairs for n in p]
        assert pairs and len(busy) == len(set(busy)), f"round {k} empty or a node twice: {pairs}"


def _assert_shape(s: Schedule, mode: Mode, cables: Sequence[tuple[str, str]] = ()) -> None:
    """Node-disjoint rounds, the mode's transfers, no direction measured twice; with `cables`,
    every cabled pair both ways and nothing else."""
    _assert_disjoint([[(t.src, t.dst) for t in r] for r in s.rounds])
    assert s.mode == mode
    assert all(t.both_ways == (mode == "bidirectional") for t in s.transfers)
    directed = s.directed()
    assert len(directed) == len(set(directed)), "a direction measured twice"
    assert all(a != b for a, b in directed)
    if cables:
        assert {frozenset(d) for d in directed} == {frozenset(c) for c in cables}
        assert len(directed) == 2 * len({frozenset(c) for c in cables})


def _ring_rounds(n: int, mode: Mode) -> int:
    """Rounds of a cycle of n >= 3 cables (module doc of schedule.py)."""
    if mode == "bidirectional":
        return 2 if n % 2 == 0 else 3
    return 4 if n % 2 == 0 else 6 if n == 3 else 5


def _partners(s: Schedule, node: str) -> tuple[set[str], set[str]]:
    """Whom `node` sends to and whom it receives from."""
    directed = s.directed()
    return {b for a, b in directed if a == node}, {a for a, b in directed if b == node}


@pytest.mark.parametrize("mode", ["directed", "bidirectional"])
def test_legs_at_every_size(mode: Mode) -> None:
    """Not a sample: every N from 2 to 128, with its exact, constant number of rounds."""
    for n in range(2, 129):
        nodes = [f"n{i}" for i in range(n)]
        s = legs(nodes, mode)
        _assert_shape(s, mode)
        directed = set(s.directed())
        assert all((b, a) in directed for a, b in directed), "every leg both ways with each partner"
        for node in nodes:
            sends, gets = _partners(s, node)
            assert len(sends) == len(gets) == min(2, n - 1), node
        want = (2 if mode == "directed" else 1) if n == 2 else _ring_rounds(n, mode)
        assert len(s.rounds) == want == s.min_rounds
        assert len(s.rounds) <= (3 if mode == "bidirectional" else 6)


@given(node_names(), modes)
def test_full(nodes: list[str], mode: Mode) -> None:
    s = full(nodes, mode)
    n = len(nodes)
    _assert_shape(s, mode)
    assert set(s.directed()) == set(permutations(nodes, 2))
    pair_rounds = n - 1 if n % 2 == 0 else n
    assert len(s.rounds) == pair_rounds * (2 if mode == "directed" else 1) == s.min_rounds


@given(node_names())
def test_stress_loads_every_leg_both_ways(nodes: list[str]) -> None:
    n = len(nodes)
    s = stress(nodes)
    assert len(s.rounds) == 1 and not s.node_disjoint and s.min_rounds == 1
    senders = Counter(t.src for t in s.transfers)
    receivers = Counter(t.dst for t in s.transfers)
    assert senders == receivers == Counter(nodes), "every node sends once and receives once"
    assert all(t.dst == nodes[(nodes.index(t.src) + 1) % n] for t in s.transfers)


@st.composite
def rings(draw: st.DrawFn) -> list[tuple[str, str]]:
    """A ring (mesh at 3) in cable order, port 0 of each node to port 1 of the next."""
    nodes = draw(node_names(low=3))
    n = len(nodes)
    return [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]


@given(rings(), modes, st.randoms())
def test_ring_and_mesh_every_cable_both_ways(
    cables: list[tuple[str, str]], mode: Mode, rnd: Random
) -> None:
    given_order = list(cables)
    rnd.shuffle(given_order)
    given_order = [(b, a) if rnd.random() < 0.5 else (a, b) for a, b in given_order]
    s = over_cables(given_order, mode)
    _assert_shape(s, mode, cables)
    assert len(s.rounds) == _ring_rounds(len(cables), mode) == s.min_rounds


@given(rings(), rings(), st.integers(0, 200), modes)
def test_paths_and_several_rings(
    one: list[tuple[str, str]], two: list[tuple[str, str]], cut: int, mode: Mode
) -> None:
    """A ring with an unreachable node left out is a path; two rings are two components."""
    names = {n for c in one for n in c}
    other = [(f"x{a}", f"x{b}") for a, b in two if f"x{a}" not in names]
    path = [c for c in one if one[cut % len(one)][0] not in c]
    for cables in (path, one + other, path + other):
        s = over_cables(cables, mode)
        _assert_shape(s, mode, cables)
        assert len(s.rounds) == s.min_rounds


@given(st.data())
def test_any_cabling_falls_back_to_matchings(data: st.DataObject) -> None:
    n = data.draw(st.integers(3, 12))
    every = [(a, b) for a in range(n) for b in range(a + 1, n)]
    chosen = data.draw(st.lists(st.sampled_from(every), unique=True, min_size=1))
    cables = [(f"n{a}", f"n{b}") for a, b in chosen]
    for mode in ("directed", "bidirectional"):
        _assert_shape(over_cables(cables, mode), mode, cables)


def test_small_and_odd_legs_cable_stress_and_duplicate_cables() -> None:
    assert legs(["a", "b"]).lines() == ["round 1/2: a->b", "round 2/2: b->a"]
    assert legs(["a", "b"], "bidirectional").lines() == ["round 1/1: a<->b"]
    three = legs(["a", "b", "c"])
    assert set(three.directed()) == set(full(["a", "b", "c"]).directed()), "legs = full at 3"
    assert len(three.rounds) == 6
    assert legs(["a"]).rounds == () and full([]).rounds == () and stress(["a"]).rounds == ()
    assert legs(list("abcde")).lines() == [
        "round 1/5: a->b, d->c",
        "round 2/5: b->a, d->e",
        "round 3/5: b->c, e->d",
        "round 4/5: c->b, e->a",
        "round 5/5: c->d, a->e",
    ]
    s = cable_stress([("a", "b"), ("b", "c"), ("c", "a"), ("b", "a")])
    assert s.lines() == ["round 1/1: a->b, b->a, b->c, c->b, c->a, a->c"]
    assert over_cables([("a", "b"), ("b", "a")]).lines() == ["round 1/2: a->b", "round 2/2: b->a"]


def test_build_dispatch() -> None:
    nodes = ["a", "b", "c", "d"]
    ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    assert build("legs", nodes) == legs(nodes)
    assert build("full", nodes, mode="bidirectional") == full(nodes, "bidirectional")
    assert build("stress", nodes) == stress(nodes)
    assert build("full", nodes, ring).directed() == build("legs", nodes, ring).directed()
    assert build("full", nodes, ring).kind == "full"
    assert build("stress", nodes, ring) == cable_stress(ring)
    assert build("legs", ["a", "b", "c"], ring) == over_cables([("a", "b"), ("b", "c")])


# -- rounds of arbitrary pairs ------------------------------------------------------------


def _check(pairs: list[tuple[int, int]], groups: list[list[int]]) -> None:
    assert sorted(i for g in groups for i in g) == list(range(len(pairs))), "every pair once"
    _assert_disjoint([[pairs[i] for i in g] for g in groups])


@st.composite
def pair_sets(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]]]:
    n = draw(st.integers(min_value=2, max_value=12))
    every = list(combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(every), unique=True, min_size=1))
    flipped = [(b, a) if draw(st.booleans()) else (a, b) for a, b in chosen]
    return n, flipped


@given(pair_sets())
def test_any_pairs(case: tuple[int, list[tuple[int, int]]]) -> None:
    n, pairs = case
    groups = rounds(pairs)
    _check(pairs, groups)
    assert len(groups) <= n
    degree = max(sum(node in p for p in pairs) for node in range(n))
    assert len(groups) >= degree


@pytest.mark.parametrize(
    ("pairs", "want"),
    [
        *((list(combinations(range(n), 2)), n - 1 if n % 2 == 0 else n) for n in range(2, 11)),
        *(([(i, (i + 1) % n) for i in range(n)], 2 if n % 2 == 0 else 3) for n in range(3, 9)),
    ],
)
def test_a_complete_graph_takes_a_tournament_and_a_ring_two_or_three(
    pairs: list[tuple[int, int]], want: int
) -> None:
    groups = rounds(pairs)
    _check(pairs, groups)
    assert len(groups) == want


def test_handles_empty() -> None:
    assert rounds([]) == [] and tournament(["a"]) == []
