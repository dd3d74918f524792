"""Bandwidth schedules: who measures with whom, in which round (pure). Every round but `stress`'s is
node-disjoint (tests sharing a node share its NIC and PCIe halves); the kinds and the cable bound
each construction meets are argued in docs/measurement.md."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from math import ceil
from typing import Literal, TypeVar

N = TypeVar("N", bound=Hashable)

Kind = Literal["legs", "full", "stress", "retest"]
Mode = Literal["directed", "bidirectional"]
Pairs = Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True, order=True)
class Transfer:
    """One test on every rail of a pair at once: `src` sends to `dst`; with `both_ways` `dst`
    sends to `src` at the same time (ib_write_bw -b)."""

    src: str
    dst: str
    both_ways: bool = False

    @property
    def id(self) -> str:
        return f"{self.src}{'<->' if self.both_ways else '->'}{self.dst}"

    def directions(self) -> tuple[tuple[str, str], ...]:
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
        """The fewest rounds any node-disjoint schedule of these transfers could take: a node is
        in one test per round, and a round holds at most floor(n/2) of the tests among the n
        nodes of one connected group."""
        if not self.rounds:
            return 0
        if not self.node_disjoint:
            return 1
        root: dict[str, str] = {}

        def find(x: str) -> str:
            while root.setdefault(x, x) != x:
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


def build(
    kind: Literal["legs", "full", "stress"],
    nodes: Sequence[str],
    cables: Pairs | None = None,
    mode: Mode = "directed",
) -> Schedule:
    """The schedule `kind` over the `nodes` that take part (distinct, as cluster.yaml's names
    are): behind a switch when `cables` is None (any two nodes can test), else along the `cables`
    whose two ends take part (ring, mesh, direct), where `legs` and `full` coincide."""
    if cables is not None:
        usable = [(a, b) for a, b in cables if a in nodes and b in nodes]
        return cable_stress(usable) if kind == "stress" else over_cables(usable, mode, kind)
    if kind == "stress":
        return stress(nodes)
    return full(nodes, mode) if kind == "full" else legs(nodes, mode)


def legs(nodes: Sequence[str], mode: Mode = "directed") -> Schedule:
    """Every node to and from its two neighbours on a virtual ring of `nodes` (switch clusters);
    a node left out of the ring costs its neighbours a partner."""
    ns, n = tuple(nodes), len(nodes)
    return _over_pairs(
        "legs", ns, [(ns[i], ns[(i + 1) % n]) for i in range(n if n >= 3 else n - 1)], mode
    )


def full(nodes: Sequence[str], mode: Mode = "directed") -> Schedule:
    """All pairs both ways, the circle method's rounds (N-1 for an even N, N for an odd N)."""
    return Schedule("full", mode, tuple(nodes), _both_ways(tournament(nodes), mode))


def stress(nodes: Sequence[str]) -> Schedule:
    """One round in which every node i sends to node i+1 (mod N) and so receives at once (not
    node-disjoint on purpose)."""
    ns, n = tuple(nodes), len(nodes)
    tests = tuple(Transfer(ns[i], ns[(i + 1) % n]) for i in range(n)) if n >= 2 else ()
    return Schedule("stress", "directed", ns, (tests,) if tests else (), node_disjoint=False)


def over_cables(cables: Pairs, mode: Mode = "directed", kind: Kind = "legs") -> Schedule:
    """Every cabled node pair both ways in the fewest rounds (ring, mesh, direct)."""
    pairs = _dedupe(cables)
    return _over_pairs(kind, tuple(dict.fromkeys(n for p in pairs for n in p)), pairs, mode)


def cable_stress(cables: Pairs) -> Schedule:
    """Every cable both ways in one round: each ring node sends and receives on both ports."""
    pairs = _dedupe(cables)
    nodes = tuple(dict.fromkeys(n for p in pairs for n in p))
    tests = tuple(t for a, b in pairs for t in (Transfer(a, b), Transfer(b, a)))
    return Schedule("stress", "directed", nodes, (tests,) if tests else (), node_disjoint=False)


# -- construction: two colours per cable (one per direction) disjoint from its neighbours' ------

_PETERSEN = ((0, 1), (2, 3), (4, 0), (1, 2), (3, 4))
"""A 5-cycle of the Petersen graph: consecutive colour pairs are disjoint, last and first too."""


def _colours(m: int, closed: bool, mode: Mode) -> list[tuple[int, ...]]:
    """Colours of the m cables of a path or cycle: (there, back), or one (both ways at once)."""
    odd = closed and m % 2 == 1
    if mode == "bidirectional":
        return [(2 if odd and i == m - 1 else i % 2,) for i in range(m)]
    if not odd:
        return [(0, 1) if i % 2 == 0 else (2, 3) for i in range(m)]
    if m == 3:
        return [(0, 1), (2, 3), (4, 5)]
    return [*_PETERSEN, *[_PETERSEN[3], _PETERSEN[4]] * ((m - 5) // 2)]


def _walks(pairs: Pairs) -> list[tuple[list[str], bool]] | None:
    """Each component of a graph of degree <= 2 as (its nodes in walk order, closed), following
    the cable order; None when a node has three or more cables."""
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
        found, todo = [first], [first]
        while todo:
            new = [x for x in adj[todo.pop()] if x not in found]
            found += new
            todo += new
        walk = [next((n for n in found if len(adj[n]) == 1), first)]
        while step := [x for x in adj[walk[-1]] if x not in walk]:
            walk.append(step[0])
        seen.update(walk)
        walks.append((walk, all(len(adj[n]) == 2 for n in walk)))
    return walks


def _over_pairs(kind: Kind, nodes: tuple[str, ...], pairs: Pairs, mode: Mode) -> Schedule:
    walks = _walks(pairs)
    if walks is None:  # a node of 3+ cables: first-fit matchings
        return Schedule(
            kind, mode, nodes, _both_ways([[pairs[i] for i in g] for g in rounds(pairs)], mode)
        )
    slots: dict[int, list[Transfer]] = {}
    for walk, closed in walks:
        edges = [(walk[i], walk[(i + 1) % len(walk)]) for i in range(len(walk) - (not closed))]
        for (a, b), colours in zip(edges, _colours(len(edges), closed, mode), strict=True):
            ways = (
                [Transfer(a, b, both_ways=True)]
                if mode == "bidirectional"
                else [Transfer(a, b), Transfer(b, a)]
            )
            for colour, t in zip(colours, ways, strict=True):
                slots.setdefault(colour, []).append(t)
    return Schedule(kind, mode, nodes, tuple(tuple(slots[c]) for c in sorted(slots)))


def _both_ways(matchings: Sequence[Pairs], mode: Mode) -> tuple[tuple[Transfer, ...], ...]:
    if mode == "bidirectional":
        return tuple(tuple(Transfer(a, b, both_ways=True) for a, b in m) for m in matchings)
    return tuple(
        tuple(Transfer(*d) for d in ds) for m in matchings for ds in (m, [(b, a) for a, b in m])
    )


def _dedupe(cables: Pairs) -> list[tuple[str, str]]:
    """One test per cabled node pair: a second cable between the same nodes adds nothing."""
    out: dict[frozenset[str], tuple[str, str]] = {}
    for a, b in cables:
        out.setdefault(frozenset((a, b)), (a, b))
    return list(out.values())


# -- rounds of arbitrary pairs -----------------------------------------------------------------


def tournament(nodes: Sequence[N]) -> list[list[tuple[N, N]]]:
    """Round-robin rounds of all pairs of `nodes` (circle method, stable order)."""
    if len(nodes) < 2:
        return []
    players: list[N | None] = [*nodes, None] if len(nodes) % 2 else list(nodes)
    n = len(players)
    out: list[list[tuple[N, N]]] = []
    for _ in range(n - 1):
        pairs = ((players[i], players[n - 1 - i]) for i in range(n // 2))
        out.append([(x, y) for x, y in pairs if x is not None and y is not None])
        players = [players[0], players[-1], *players[1:-1]]
    return out


def _first_fit(pairs: Sequence[tuple[N, N]], order: Sequence[int]) -> list[list[int]]:
    rounds: list[list[int]] = []
    busy: list[set[N]] = []
    for i in order:
        k = next((k for k, used in enumerate(busy) if not used & set(pairs[i])), len(busy))
        if k == len(busy):
            rounds.append([])
            busy.append(set())
        rounds[k].append(i)
        busy[k].update(pairs[i])
    return [sorted(r) for r in rounds]


def rounds(pairs: Sequence[tuple[N, N]]) -> list[list[int]]:
    """Indices of `pairs` grouped into rounds in which no node appears twice: first fit in the
    given order (a ring takes 2 rounds, an odd ring 3) or in the tournament's (never more than
    the tournament: any pairs among N nodes take at most N rounds), the fewer rounds."""
    slot = {
        frozenset(p): k
        for k, games in enumerate(tournament(list(dict.fromkeys(n for p in pairs for n in p))))
        for p in games
    }
    by_tournament = sorted(range(len(pairs)), key=lambda i: (slot[frozenset(pairs[i])], i))
    return min(_first_fit(pairs, range(len(pairs))), _first_fit(pairs, by_tournament), key=len)
