"""Rounds of bandwidth tests in which no node takes part twice (pure).

Tests that share a node would share its NIC and PCIe links and under-report each other, so they
never overlap; tests that share no node run at the same time. For a switch (every pair of nodes
linked) this is a round-robin tournament: the circle method gives N-1 rounds for an even N and N
for an odd N. For any other set of pairs (ring, mesh, a subset), edges are placed greedily
(first fit) in two orders, the given one (cable order: a ring takes 2 rounds, an odd ring 3) and
the tournament's; the fewer rounds win. First fit in tournament order never needs more rounds
than the tournament itself, so any set of pairs among N nodes takes at most N rounds.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

N = TypeVar("N", bound=Hashable)


def tournament(nodes: Sequence[N]) -> list[list[tuple[N, N]]]:
    """Round-robin rounds of all pairs of `nodes` (circle method, stable order)."""
    players: list[N | None] = list(nodes)
    if len(players) < 2:
        return []
    if len(players) % 2:
        players.append(None)  # a bye
    n = len(players)
    rounds: list[list[tuple[N, N]]] = []
    for _ in range(n - 1):
        games: list[tuple[N, N]] = []
        for i in range(n // 2):
            x, y = players[i], players[n - 1 - i]
            if x is not None and y is not None:
                games.append((x, y))
        rounds.append(games)
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def _first_fit(pairs: Sequence[tuple[N, N]], order: Sequence[int]) -> list[list[int]]:
    rounds: list[list[int]] = []
    busy: list[set[N]] = []
    for i in order:
        a, b = pairs[i]
        for k, used in enumerate(busy):
            if a not in used and b not in used:
                rounds[k].append(i)
                used.update((a, b))
                break
        else:
            rounds.append([i])
            busy.append({a, b})
    return [sorted(r) for r in rounds]


def rounds(pairs: Sequence[tuple[N, N]]) -> list[list[int]]:
    """Indices of `pairs` grouped into rounds; within a round no node appears twice.

    Every pair lands in exactly one round; a pair of a node with itself is refused.
    """
    for a, b in pairs:
        if a == b:
            raise ValueError(f"a pair needs two nodes, got {a!r} twice")
    if not pairs:
        return []
    nodes = list(dict.fromkeys(n for p in pairs for n in p))
    slot: dict[frozenset[N], int] = {}
    for k, games in enumerate(tournament(nodes)):
        for a, b in games:
            slot[frozenset((a, b))] = k
    by_tournament = sorted(range(len(pairs)), key=lambda i: (slot[frozenset(pairs[i])], i))
    candidates = [
        _first_fit(pairs, range(len(pairs))),
        _first_fit(pairs, by_tournament),
    ]
    return min(candidates, key=len)


def node_rounds(nodes: Sequence[N], slots: int) -> list[list[tuple[N, int]]]:
    """Single-node tests (loopback): slot k of every node in round k, all nodes together."""
    return [[(n, k) for n in nodes] for k in range(slots)]
