"""The round scheduler: no node twice in a round, every pair exactly once, few rounds."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric.measure.schedule import rounds, tournament


def _check(pairs: list[tuple[int, int]], groups: list[list[int]]) -> None:
    placed = sorted(i for g in groups for i in g)
    assert placed == list(range(len(pairs))), "every pair exactly once"
    for g in groups:
        nodes = [n for i in g for n in pairs[i]]
        assert len(nodes) == len(set(nodes)), f"a node twice in round {g}"
        assert g, "no empty round"


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


@pytest.mark.parametrize("n", range(2, 11))
def test_complete_graph_is_a_tournament(n: int) -> None:
    pairs = list(combinations(range(n), 2))
    groups = rounds(pairs)
    _check(pairs, groups)
    assert len(groups) == (n - 1 if n % 2 == 0 else n)


@pytest.mark.parametrize(("n", "want"), [(3, 3), (4, 2), (5, 3), (6, 2), (7, 3), (8, 2)])
def test_ring_in_cable_order(n: int, want: int) -> None:
    pairs = [(i, (i + 1) % n) for i in range(n)]
    groups = rounds(pairs)
    _check(pairs, groups)
    assert len(groups) == want


def test_refuses_self_pair_and_handles_empty() -> None:
    with pytest.raises(ValueError, match="two nodes"):
        rounds([("a", "a")])
    assert rounds([]) == []
    assert tournament(["a"]) == []
