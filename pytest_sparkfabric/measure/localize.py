"""Where a bandwidth fault is: suspects from the pass/fail outcomes of a schedule, re-tests that
would tell what cannot be told yet, and suspects for failed items no finding explains. The rule
and its limits: docs/measurement.md.
"""

# Over 400 lines on purpose: the localization rule and its re-test planning read as one argument;
# each part needs the other's terms.

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from pytest_sparkfabric.diagnosis.causes import Failure, ends
from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure.schedule import Schedule, Transfer, rounds
from pytest_sparkfabric.objects import Obj
from pytest_sparkfabric.objects import node as node_obj

Role = Literal["send", "receive", "both"]
Side = Literal["send", "receive"]
SuspectKind = Literal["node", "cable", "path"]
_SHOWN = 6
_SIDES: tuple[tuple[Side, Side], ...] = (("send", "receive"), ("receive", "send"))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One measured direction of a pair: `src` sent to `dst` on `rail` (None: the pair's rails
    together) and met its threshold or not. Unmeasured directions have no outcome."""

    src: str
    dst: str
    passed: bool
    rail: int | None = None

    @property
    def id(self) -> str:
        return f"{self.src}->{self.dst}" + ("" if self.rail is None else f" rail{self.rail}")


@dataclass(frozen=True, slots=True)
class Suspect:
    kind: SuspectKind
    """node: the node, its port or its cable/leg; cable: the cable between two nodes (ring, mesh);
    path: between two switch legs that both work elsewhere."""
    nodes: tuple[str, ...]
    role: Role
    """node: the direction that fails from the node's side; cable/path: send = nodes[0]->nodes[1]
    only, both = both ways."""
    rails: tuple[int, ...]
    """The rails it fails on; empty when the outcomes were per pair, not per rail."""
    failed: tuple[Outcome, ...]
    cleared: tuple[Outcome, ...]
    """The partners' (or ends') passing tests with others that rule them out."""
    confirm: tuple[Transfer, ...] = ()
    """Tests against a third partner that would confirm it (switch only; none left: empty)."""
    cabled: bool = False
    """Found on a ring or mesh (a node has two cables), not behind a switch (one leg)."""

    @property
    def confirmed(self) -> bool:
        """A node that fails with three or more partners has had its third-partner test."""
        return self.kind == "node" and len(_partners(self.failed, self.nodes[0])) >= 3

    def line(self) -> str:
        rails = _rails(self.rails)
        if self.kind == "node":
            x = self.nodes[0]
            partners = _partners(self.failed, x)
            verb = {"send": "sending to", "receive": "receiving from", "both": "both ways with"}
            what = (
                f"{x} itself (its NIC or its settings: both its cables fail), not its neighbours"
                if self.cabled
                else f"{x} (its NIC port, its cable or its switch leg), not its partners"
            )
            text = (
                f"{x}{rails}: fails {verb[self.role]} {_names(partners)}, while "
                f"{_passes(self.cleared, partners)}: suspect {what}."
            )
        else:
            way = "both ways" if self.role == "both" else f"{self.nodes[0]}->{self.nodes[1]} only"
            what = (
                "this cable or its two ports; reseat or swap it"
                if self.kind == "cable"
                else "the switch between them, not a leg (forwarding, ARP, the address plan)"
            )
            text = (
                f"{'<->'.join(self.nodes)}{rails}: fails {way}, while "
                f"{_passes(self.cleared, list(self.nodes))}: suspect {what}."
            )
        if self.confirm:
            text += " Confirm: " + ", ".join(t.id for t in self.confirm) + "."
        return text


@dataclass(frozen=True, slots=True)
class Undecided:
    nodes: tuple[str, ...]
    """The candidates: the ends the schedule could not clear."""
    rails: tuple[int, ...]
    failed: tuple[Outcome, ...]
    reason: str
    unclear: tuple[tuple[str, Side], ...] = ()
    """Each candidate with the direction in which nothing cleared it."""
    retest: tuple[Transfer, ...] = ()
    """Tests that would tell; empty when none can be run."""

    def line(self) -> str:
        ids = sorted({f"{o.src}->{o.dst}" for o in self.failed})
        pairs = _names(ids) if len(ids) <= _SHOWN else f"{len(ids)} directions, e.g. {ids[0]}"
        head = f"{pairs}{_rails(self.rails)}: " if self.failed else f"{_rails(self.rails)[1:]}: "
        tail = (
            " Retest: " + ", ".join(t.id for t in self.retest) + "."
            if self.retest
            else " No test can tell: no third partner is free to test against."
            if self.unclear
            else ""
        )
        return f"{head.lstrip()}undecided: {self.reason}.{tail}"


@dataclass(frozen=True)
class Localization:
    suspects: tuple[Suspect, ...]
    undecided: tuple[Undecided, ...]

    def retests(self) -> Schedule:
        """Every confirm and retest test, node-disjoint, one direction per test."""
        wanted = list(
            dict.fromkeys(
                [t for s in self.suspects for t in s.confirm]
                + [t for u in self.undecided for t in u.retest]
            )
        )
        groups = rounds([(t.src, t.dst) for t in wanted])
        nodes = tuple(dict.fromkeys(n for t in wanted for n in (t.src, t.dst)))
        plan = tuple(tuple(wanted[i] for i in g) for g in groups)
        return Schedule("retest", "directed", nodes, plan)

    def lines(self) -> list[str]:
        return [s.line() for s in self.suspects] + [u.line() for u in self.undecided]


def localize(
    outcomes: Iterable[Outcome], cables: Sequence[tuple[str, str]] | None = None
) -> Localization:
    """Suspects and undecided findings from `outcomes`; `cables` None means behind a switch (any
    two nodes can test), else only cabled pairs can (ring, mesh, direct)."""
    outs = list(outcomes)
    by_rail: dict[int | None, list[Outcome]] = {}
    for o in outs:
        by_rail.setdefault(o.rail, []).append(o)
    found_s: list[Suspect] = []
    found_u: list[Undecided] = []
    for rail in sorted(by_rail, key=lambda r: -1 if r is None else r):
        s, u = _one_rail(by_rail[rail], rail, cabled=cables is not None)
        found_s += s
        found_u += u
    suspects = _merge(found_s, lambda s: (s.kind, s.nodes, s.role), _join_suspects)
    undecided = _merge(found_u, lambda u: (u.nodes, u.reason, u.unclear), _join_undecided)
    picker = _Picker(outs, suspects, undecided, cables)
    return Localization(
        tuple(replace(s, confirm=picker.confirm(s)) for s in suspects),
        tuple(replace(u, retest=picker.retest(u)) for u in undecided),
    )


# -- one rail ----------------------------------------------------------------------------------


class _Rail:
    """One rail's outcomes, indexed by node and side."""

    def __init__(self, outs: list[Outcome]) -> None:
        state: dict[tuple[str, str], Outcome] = {}
        for o in outs:
            # A direction that both passed and failed counts as failed: an intermittent fault.
            if (o.src, o.dst) not in state or not o.passed:
                state[(o.src, o.dst)] = o
        self.nodes = list(dict.fromkeys(n for o in outs for n in (o.src, o.dst)))
        self.bad = [o for o in state.values() if not o.passed]
        self.ok = [o for o in state.values() if o.passed]
        self._ok: dict[tuple[str, Side], list[Outcome]] = {}
        self._bad: dict[tuple[str, Side], list[Outcome]] = {}
        for index, group in ((self._ok, self.ok), (self._bad, self.bad)):
            for o in group:
                index.setdefault((o.src, "send"), []).append(o)
                index.setdefault((o.dst, "receive"), []).append(o)

    def failing(self, node: str, side: Side) -> list[Outcome]:
        return self._bad.get((node, side), [])

    def cleared(self, node: str, side: Side, besides: str) -> Outcome | None:
        """A passing test of `node` in `side` with a partner other than `besides`."""
        for o in self._ok.get((node, side), []):
            if (o.dst if side == "send" else o.src) != besides:
                return o
        return None

    def passes(self, node: str, side: Side) -> bool:
        return (node, side) in self._ok


def _one_rail(
    outs: list[Outcome], rail: int | None, cabled: bool
) -> tuple[list[Suspect], list[Undecided]]:
    r = _Rail(outs)
    rails = () if rail is None else (rail,)
    if not r.ok and r.bad and len(r.nodes) >= 3:
        reason = (
            "no test passed, so the fault is common to every node (the switch, its settings or "
            "the address plan) and cannot be placed on one"
        )
        return [], [Undecided(tuple(r.nodes), rails, tuple(r.bad), reason)]
    suspects: list[Suspect] = []
    blamed: set[tuple[str, str]] = set()
    for x in r.nodes:
        sides: list[Side] = []
        failed: list[Outcome] = []
        cleared: list[Outcome] = []
        for side, other in _SIDES:
            mine = r.failing(x, side)
            clear: dict[str, Outcome] = {}
            for o in mine:
                partner = o.dst if side == "send" else o.src
                if c := r.cleared(partner, other, x):
                    clear[partner] = c
            if len(clear) >= 2 and not r.passes(x, side):
                sides.append(side)
                failed += mine
                cleared += clear.values()
                blamed.update((o.src, o.dst) for o in mine)
        if sides:
            role: Role = "both" if len(sides) == 2 else sides[0]
            suspect = Suspect(
                "node", (x,), role, rails, tuple(failed), tuple(cleared), cabled=cabled
            )
            suspects.append(suspect)
    groups: dict[frozenset[str], list[Outcome]] = {}
    for o in r.bad:
        if (o.src, o.dst) not in blamed:
            groups.setdefault(frozenset((o.src, o.dst)), []).append(o)
    undecided: list[Undecided] = []
    for failed_pair in groups.values():
        found = _pair(r, failed_pair, rails, cabled)
        if isinstance(found, Suspect):
            suspects.append(found)
        else:
            undecided.append(found)
    return suspects, undecided


def _pair(
    r: _Rail, failed: list[Outcome], rails: tuple[int, ...], cabled: bool
) -> Suspect | Undecided:
    cleared: list[Outcome] = []
    unclear: list[tuple[str, Side]] = []
    for o in failed:
        ends: tuple[tuple[str, Side, str], ...] = (
            (o.src, "send", o.dst),
            (o.dst, "receive", o.src),
        )
        for node, side, other in ends:
            c = r.cleared(node, side, other)
            if c is None:
                unclear.append((node, side))
            else:
                cleared.append(c)
    first = failed[0]
    if not unclear:
        role: Role = "both" if len(failed) == 2 else "send"
        kind: SuspectKind = "cable" if cabled else "path"
        pair = (first.src, first.dst)
        return Suspect(kind, pair, role, rails, tuple(failed), tuple(cleared), cabled=cabled)
    candidates = tuple(dict.fromkeys(n for n, _ in unclear))
    partner = {first.src: first.dst, first.dst: first.src}
    why = "; ".join(
        f"{n} has no passing test with a partner other than {partner[n]}" for n in candidates
    )
    link = "the cable" if cabled else "the path"
    return Undecided(
        candidates,
        rails,
        tuple(failed),
        f"{why}, so the schedule cannot tell {_names(list(candidates))} from {link} between "
        f"{first.src} and {first.dst}",
        tuple(dict.fromkeys(unclear)),
    )


# -- retests -----------------------------------------------------------------------------------


class _Picker:
    """Third partners for confirm and retest tests: nodes that pass elsewhere and are neither
    suspects nor candidates, the least used first, never a direction already measured."""

    def __init__(
        self,
        outs: list[Outcome],
        suspects: Sequence[Suspect],
        undecided: Sequence[Undecided],
        cables: Sequence[tuple[str, str]] | None,
    ) -> None:
        involved = {n for s in suspects if s.kind == "node" for n in s.nodes}
        involved |= {n for u in undecided for n in u.nodes}
        passing = dict.fromkeys(n for o in outs if o.passed for n in (o.src, o.dst))
        self.healthy = [n for n in passing if n not in involved]
        self.tested = {(o.src, o.dst) for o in outs}
        self.used = dict.fromkeys(self.healthy, 0)
        self.adj: dict[str, set[str]] | None = None
        if cables is not None:
            self.adj = {}
            for a, b in cables:
                self.adj.setdefault(a, set()).add(b)
                self.adj.setdefault(b, set()).add(a)

    def _test(self, node: str, side: Side) -> Transfer | None:
        choices = [
            w
            for w in self.healthy
            if w != node
            and ((node, w) if side == "send" else (w, node)) not in self.tested
            and (self.adj is None or w in self.adj.get(node, set()))
        ]
        if not choices:
            return None
        # A partner never met in either direction first, then the least used.
        w = min(
            choices,
            key=lambda c: ((node, c) in self.tested or (c, node) in self.tested, self.used[c]),
        )
        self.used[w] += 1
        test = Transfer(node, w) if side == "send" else Transfer(w, node)
        self.tested.add((test.src, test.dst))
        return test

    def confirm(self, s: Suspect) -> tuple[Transfer, ...]:
        if s.kind != "node" or s.confirmed or self.adj is not None:
            return ()
        sides: tuple[Side, ...] = ("send", "receive") if s.role == "both" else (s.role,)
        return tuple(t for side in sides if (t := self._test(s.nodes[0], side)))

    def retest(self, u: Undecided) -> tuple[Transfer, ...]:
        return tuple(t for node, side in u.unclear if (t := self._test(node, side)))


F = TypeVar("F")


# -- helpers -----------------------------------------------------------------------------------


def _merge(
    found: list[F], key: Callable[[F], Hashable], join: Callable[[F, F], F]
) -> tuple[F, ...]:
    """One finding per suspect across rails: a dead node is one suspect, not one per rail."""
    merged: dict[Hashable, F] = {}
    for f in found:
        k = key(f)
        merged[k] = join(merged[k], f) if k in merged else f
    return tuple(merged.values())


def _join_suspects(a: Suspect, b: Suspect) -> Suspect:
    rails = tuple(sorted({*a.rails, *b.rails}))
    return replace(a, rails=rails, failed=a.failed + b.failed, cleared=a.cleared + b.cleared)


def _join_undecided(a: Undecided, b: Undecided) -> Undecided:
    return replace(a, rails=tuple(sorted({*a.rails, *b.rails})), failed=a.failed + b.failed)


def _passes(cleared: Iterable[Outcome], subjects: Sequence[str]) -> str:
    """'a passes with b and c with d': who cleared each subject."""
    seen: dict[str, list[str]] = {}
    for o in cleared:
        subject, witness = (o.src, o.dst) if o.src in subjects else (o.dst, o.src)
        if witness not in seen.setdefault(subject, []):
            seen[subject].append(witness)
    parts = [f"{n} with {', '.join(seen[n])}" for n in subjects if n in seen]
    if parts:
        parts[0] = parts[0].replace(" with ", " passes with ", 1)
    return _names(parts)


def _partners(failed: Iterable[Outcome], node: str) -> list[str]:
    return list(dict.fromkeys(o.dst if o.src == node else o.src for o in failed))


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _rails(rails: tuple[int, ...]) -> str:
    return f" ({', '.join(f'rail {r}' for r in rails)})" if rails else ""


# -- suspects for failed items no finding explains ---------------------------------------------
# Outcomes are per test function, so one-rail and both-rail tests do not clear each other.


def _test_of(item: str) -> str:
    return item.split("[", 1)[0]


def suspects(
    loose: Sequence[Failure],
    passed: Sequence[Failure],
    cables: Sequence[tuple[str, str]] | None,
) -> list[tuple[Finding, tuple[Obj, ...], tuple[str, ...]]]:
    """(finding, objects, items) per suspect node; `cables` None: behind a switch."""
    out: list[tuple[Finding, tuple[Obj, ...], tuple[str, ...]]] = []
    tests = dict.fromkeys(_test_of(f.item) for f in loose if ends(f.path))
    for test in tests:
        outcomes: list[Outcome] = []
        failed: dict[str, tuple[str, str]] = {}
        for f, ok in [(f, False) for f in loose] + [(f, True) for f in passed]:
            found = ends(f.path)
            if found is None or _test_of(f.item) != test:
                continue
            a, b, rail = found
            # An item measures both directions of its link (or it is one direction).
            outcomes += [Outcome(a, b, ok, rail), Outcome(b, a, ok, rail)]
            if not ok:
                failed[f.item] = (a, b)
        for suspect in localize(outcomes, cables).suspects:
            if suspect.kind != "node":
                continue
            x = suspect.nodes[0]
            mine = tuple(i for i, pair in failed.items() if x in pair)
            if mine:
                finding = Finding(RULES["node_suspect"], x, (x,), suspect.line())
                out.append((finding, (node_obj(x),), mine))
    return out
