"""Bandwidth schedules: who measures with whom, in which round (pure). Every round but
`stress`'s is node-disjoint (tests sharing a node share its NIC and PCIe halves); the kinds and
the cable bound each construction meets are argued in docs/measurement.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from math import ceil
from typing import Literal, TypeVar

N = TypeVar("N", bound=Hashable)

Kind = Literal["legs", "full", "stress", "retest"]
Mode = Literal["directed", "bidirectional"]
StressPattern = Literal["shift", "all"]


@dataclass(frozen=True, slots=True, order=True)
class Transfer:
    """One bandwidth test on every rail of a pair at once: `src` sends to `dst`; with `both_ways`
    `dst` sends to `src` at the same time (ib_write_bw -b)."""

    src: str
    dst: str
    both_ways: bool = False

    @property
    def id(self) -> str:
        return f"{self.src}{'<->' if self.both_ways else '->'}{self.dst}"

    def directions(self) -> tuple[tuple[str, str], ...]:
        """The (sender, receiver) pairs this test measures."""
        there = (self.src, self.dst)
        return (there, (self.dst, self.src)) if self.both_ways else (there,)


@dataclass(frozen=True)
class Schedule:
    kind: Kind
    mode: Mode
    nodes: tuple[str, ...]
    rounds: tuple[tuple[Transfer, ...], ...]
    """Tests that run at once, one test's duration per round."""
    node_disjoint: bool = True

    @property
    def transfers(self) -> tuple[Transfer, ...]:
        return tuple(t for r in self.rounds for t in r)

    def directed(self) -> tuple[tuple[str, str], ...]:
        """Every (sender, receiver) measured, in round order."""
        return tuple(d for t in self.transfers for d in t.directions())

    @property
    def min_rounds(self) -> int:
        """The fewest rounds any node-disjoint schedule of these same transfers could take: a node
        is in one test per round, and a round holds at most floor(n/2) of the tests among the n
        nodes of one connected group."""
        if not self.rounds:
            return 0
        if not self.node_disjoint:
            return 1
        root: dict[str, str] = {}

        def find(x: str) -> str:
            while root.setdefault(x, x) != x:
                root[x] = root[root[x]]
                x = root[x]
            return x

        load: Counter[str] = Counter()
        for t in self.transfers:
            load.update((t.src, t.dst))
            root[find(t.src)] = find(t.dst)
        tests: Counter[str] = Counter(find(t.src) for t in self.transfers)
        size: Counter[str] = Counter(find(n) for n in load)
        return max(max(load.values()), *(ceil(tests[g] / (size[g] // 2)) for g in tests))

    def lines(self) -> list[str]:
        return [
            f"round {k}/{len(self.rounds)}: " + ", ".join(t.id for t in ts)
            for k, ts in enumerate(self.rounds, 1)
        ]


# -- the schedules ----------------------------------------------------------------------------


def build(
    kind: Kind,
    nodes: Sequence[str],
    cables: Sequence[tuple[str, str]] | None = None,
    mode: Mode = "directed",
    pattern: StressPattern = "shift",
) -> Schedule:
    """The schedule `kind` over `nodes`, the nodes that take part (give it those that answer):
    behind a switch when `cables` is None (any two nodes can test), else along those `cables`
    whose two ends take part (ring, mesh, direct), where `legs` and `full` coincide."""
    if kind == "retest":
        raise ValueError("'retest' schedules come from localize(); choose legs, full or stress")
    if cables is not None:
        taking_part = set(nodes)
        usable = [(a, b) for a, b in cables if a in taking_part and b in taking_part]
        if kind == "stress":
            return cable_stress(usable)
        return over_cables(usable, mode, kind)
    if kind == "stress":
        return stress(nodes, pattern)
    return full(nodes, mode) if kind == "full" else legs(nodes, mode)


def legs(nodes: Sequence[str], mode: Mode = "directed") -> Schedule:
    """Every node to and from its two neighbours on a virtual ring of `nodes` (switch clusters).

    Give it the nodes that answer: a node left out of the ring costs its neighbours a partner."""
    ns = _unique(nodes)
    n = len(ns)
    ring = [(ns[i], ns[(i + 1) % n]) for i in range(n if n >= 3 else n - 1)]
    return _over_pairs("legs", ns, ring, mode)


def full(nodes: Sequence[str], mode: Mode = "directed") -> Schedule:
    """All pairs both ways, the circle method's rounds (N-1 for an even N, N for an odd N)."""
    ns = _unique(nodes)
    matchings = [[(a, b) for a, b in games] for games in tournament(ns)]
    return Schedule("full", mode, ns, _both_ways(matchings, mode))


def stress(nodes: Sequence[str], pattern: StressPattern = "shift", shift: int = 1) -> Schedule:
    """One round in which every node sends and receives at once (not node-disjoint on purpose).

    `shift`: node i sends to node i+shift (mod N), so every leg carries full rate both ways at
    once; `all`: every node to every other (N(N-1) tests; each shares its leg N-1 ways)."""
    ns = _unique(nodes)
    n = len(ns)
    if n < 2:
        return Schedule("stress", "directed", ns, (), node_disjoint=False)
    if pattern == "all":
        tests = tuple(Transfer(a, b) for a in ns for b in ns if a != b)
    else:
        if not 0 < shift < n:
            raise ValueError(f"stress shift {shift} must be between 1 and {n - 1} for {n} nodes")
        tests = tuple(Transfer(ns[i], ns[(i + shift) % n]) for i in range(n))
    return Schedule("stress", "directed", ns, (tests,), node_disjoint=False)


def over_cables(
    cables: Sequence[tuple[str, str]], mode: Mode = "directed", kind: Kind = "legs"
) -> Schedule:
    """Every cabled node pair both ways in the fewest rounds (ring, mesh, direct; module doc)."""
    pairs = _dedupe(cables)
    nodes = tuple(dict.fromkeys(n for p in pairs for n in p))
    return _over_pairs(kind, nodes, pairs, mode)


def cable_stress(cables: Sequence[tuple[str, str]]) -> Schedule:
    """Every cable both ways in one round: each ring node sends and receives on both ports."""
    pairs = _dedupe(cables)
    nodes = tuple(dict.fromkeys(n for p in pairs for n in p))
    tests = tuple(t for a, b in pairs for t in (Transfer(a, b), Transfer(b, a)))
    return Schedule("stress", "directed", nodes, (tests,) if tests else (), node_disjoint=False)


# -- construction ------------------------------------------------------------------------------

_PETERSEN = ((0, 1), (2, 3), (4, 0), (1, 2), (3, 4))
"""A 5-cycle of the Petersen graph: consecutive colour pairs are disjoint, last and first too."""


def _directed_colours(m: int, closed: bool) -> list[tuple[int, int]]:
    """Colours (there, back) of the m cables of a path or cycle; neighbours' pairs are disjoint."""
    if not closed or m % 2 == 0:
        return [(0, 1) if i % 2 == 0 else (2, 3) for i in range(m)]
    if m == 3:
        return [(0, 1), (2, 3), (4, 5)]
    return [*_PETERSEN, *[_PETERSEN[3], _PETERSEN[4]] * ((m - 5) // 2)]


def _pair_colours(m: int, closed: bool) -> list[int]:
    colours = [i % 2 for i in range(m)]
    if closed and m % 2:
        colours[-1] = 2
    return colours


def _walks(pairs: Sequence[tuple[str, str]]) -> list[tuple[list[str], bool]] | None:
    """Each component of a graph of degree <= 2 as (its nodes in walk order, closed), following the
    cable order; None when a node has three or more cables."""
    adj: dict[str, list[str]] = {}
    for a, b in pairs:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    if any(len(v) > 2 for v in adj.values()):
        return None
    seen: set[str] = set()
    walks: list[tuple[list[str], bool]] = []
    for first in adj:
        if first in seen:
            continue
        component = _component(adj, first)
        ends = [n for n in component if len(adj[n]) == 1]
        start = ends[0] if ends else first
        walk, prev = [start], None
        while True:
            step = [x for x in adj[walk[-1]] if x != prev and x not in walk]
            if not step:
                break
            prev = walk[-1]
            walk.append(step[0])
        seen.update(walk)
        walks.append((walk, not ends))
    return walks


def _component(adj: dict[str, list[str]], first: str) -> list[str]:
    found, todo = [first], [first]
    while todo:
        for x in adj[todo.pop()]:
            if x not in found:
                found.append(x)
                todo.append(x)
    return found


def _over_pairs(
    kind: Kind, nodes: tuple[str, ...], pairs: Sequence[tuple[str, str]], mode: Mode
) -> Schedule:
    walks = _walks(pairs)
    if walks is None:
        matchings = [[pairs[i] for i in group] for group in rounds(pairs)]
        return Schedule(kind, mode, nodes, _both_ways(matchings, mode))
    slots: dict[int, list[Transfer]] = {}
    for walk, closed in walks:
        edges = [(walk[i], walk[(i + 1) % len(walk)]) for i in range(len(walk) - (not closed))]
        if mode == "bidirectional":
            for (a, b), c in zip(edges, _pair_colours(len(edges), closed), strict=True):
                slots.setdefault(c, []).append(Transfer(a, b, both_ways=True))
        else:
            for (a, b), (there, back) in zip(
                edges, _directed_colours(len(edges), closed), strict=True
            ):
                slots.setdefault(there, []).append(Transfer(a, b))
                slots.setdefault(back, []).append(Transfer(b, a))
    return Schedule(kind, mode, nodes, tuple(tuple(slots[c]) for c in sorted(slots)))


def _both_ways(
    matchings: Sequence[Sequence[tuple[str, str]]], mode: Mode
) -> tuple[tuple[Transfer, ...], ...]:
    if mode == "bidirectional":
        return tuple(tuple(Transfer(a, b, both_ways=True) for a, b in m) for m in matchings)
    out: list[tuple[Transfer, ...]] = []
    for m in matchings:
        out.append(tuple(Transfer(a, b) for a, b in m))
        out.append(tuple(Transfer(b, a) for a, b in m))
    return tuple(out)


def _unique(nodes: Sequence[str]) -> tuple[str, ...]:
    seen = tuple(dict.fromkeys(nodes))
    if len(seen) != len(nodes):
        twice = sorted({n for n in nodes if list(nodes).count(n) > 1})
        raise ValueError(f"a schedule needs distinct nodes; named twice: {', '.join(twice)}")
    return seen


def _dedupe(cables: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """One test per cabled node pair: a second cable between the same nodes adds nothing."""
    out: dict[frozenset[str], tuple[str, str]] = {}
    for a, b in cables:
        if a == b:
            raise ValueError(f"a cable needs two nodes, got {a!r} at both ends")
        out.setdefault(frozenset((a, b)), (a, b))
    return list(out.values())


# -- rounds of arbitrary pairs (today's callers: rdma.py, tcp.py) -------------------------------


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

    Every pair lands in exactly one round; a pair of a node with itself is refused. Edges are
    placed greedily (first fit) in two orders, the given one (cable order: a ring takes 2 rounds,
    an odd ring 3) and the tournament's; the fewer rounds win. First fit in tournament order never
    needs more rounds than the tournament itself, so any set of pairs among N nodes takes at most
    N rounds.
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
