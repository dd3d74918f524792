"""Where a bandwidth fault is: suspects from the pass/fail outcomes of a schedule, re-tests that
would tell what cannot be told yet, and suspects for failed items no finding explains. The rule and
its limits: docs/measurement.md."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pytest_sparkfabric.diagnosis.causes import Failure, ends
from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure.schedule import Pairs, Schedule, Transfer, rounds
from pytest_sparkfabric.objects import Obj
from pytest_sparkfabric.objects import node as node_obj

Role = Literal["send", "receive", "both"]
Side = Literal["send", "receive"]
SuspectKind = Literal["node", "cable", "path"]
_SHOWN = 6
_SIDES: tuple[Side, Side] = ("send", "receive")
_OTHER: dict[Side, Side] = {"send": "receive", "receive": "send"}
_VERB = {"send": "sending to", "receive": "receiving from", "both": "both ways with"}


@dataclass(frozen=True, slots=True)
class Outcome:
    """One measured direction of a pair: `src` sent to `dst` on `rail` (None: the pair's rails
    together) and met its threshold or not. Unmeasured directions have no outcome."""

    src: str
    dst: str
    passed: bool
    rail: int | None = None


@dataclass(frozen=True, slots=True)
class Suspect:
    """`kind` node: the node, its port or its cable/leg, `role` the direction that fails from its
    side; cable (ring, mesh) or path (between two switch legs that work elsewhere): `role` send
    is nodes[0]->nodes[1] only. `rails` empty: the outcomes were per pair. `cleared`: the
    partners' (or ends') passing tests with others that rule them out; `confirm`: tests against
    a third partner that would confirm it (switch only); `cabled`: found on a ring or mesh."""

    kind: SuspectKind
    nodes: tuple[str, ...]
    role: Role
    rails: tuple[int, ...]
    failed: tuple[Outcome, ...]
    cleared: tuple[Outcome, ...]
    confirm: tuple[Transfer, ...] = ()
    cabled: bool = False

    @property
    def confirmed(self) -> bool:
        """A node that fails with three or more partners has had its third-partner test."""
        return self.kind == "node" and len(_partners(self.failed, self.nodes[0])) >= 3

    def line(self) -> str:
        x, rails = self.nodes[0], _rails(self.rails)
        if self.kind == "node":
            subjects: Sequence[str] = _partners(self.failed, x)
            head = f"{x}{rails}: fails {_VERB[self.role]} {_names(subjects)}"
            what = (
                f"{x} itself (its NIC or its settings: both its cables fail), not its neighbours"
                if self.cabled
                else f"{x} (its NIC port, its cable or its switch leg), not its partners"
            )
        else:
            subjects = self.nodes
            way = "both ways" if self.role == "both" else f"{x}->{self.nodes[1]} only"
            head = f"{'<->'.join(self.nodes)}{rails}: fails {way}"
            what = (
                "this cable or its two ports; reseat or swap it"
                if self.kind == "cable"
                else "the switch between them, not a leg (forwarding, ARP, the address plan)"
            )
        text = f"{head}, while {_passes(self.cleared, subjects)}: suspect {what}."
        return text + (
            " Confirm: " + ", ".join(t.id for t in self.confirm) + "." if self.confirm else ""
        )


@dataclass(frozen=True, slots=True)
class Undecided:
    """`nodes`: the ends the schedule could not clear, `unclear` each with the direction in which
    nothing cleared it; `retest`: the tests that would tell (empty: none can be run)."""

    nodes: tuple[str, ...]
    rails: tuple[int, ...]
    failed: tuple[Outcome, ...]
    reason: str
    unclear: tuple[tuple[str, Side], ...] = ()
    retest: tuple[Transfer, ...] = ()

    def line(self) -> str:
        ids = sorted({f"{o.src}->{o.dst}" for o in self.failed})
        pairs = _names(ids) if len(ids) <= _SHOWN else f"{len(ids)} directions, e.g. {ids[0]}"
        head = f"{pairs}{_rails(self.rails)}: " if self.failed else f"{_rails(self.rails)[1:]}: "
        tail = (
            " No test can tell: no third partner is free to test against." if self.unclear else ""
        )
        if self.retest:
            tail = " Retest: " + ", ".join(t.id for t in self.retest) + "."
        return f"{head.lstrip()}undecided: {self.reason}.{tail}"


@dataclass(frozen=True)
class Localization:
    suspects: tuple[Suspect, ...]
    undecided: tuple[Undecided, ...]

    def retests(self) -> Schedule:
        """Every confirm and retest test, node-disjoint, one direction per test."""
        tests = [t for s in self.suspects for t in s.confirm]
        wanted = list(dict.fromkeys(tests + [t for u in self.undecided for t in u.retest]))
        plan = tuple(tuple(wanted[i] for i in g) for g in rounds([(t.src, t.dst) for t in wanted]))
        nodes = tuple(dict.fromkeys(n for t in wanted for n in (t.src, t.dst)))
        return Schedule("retest", "directed", nodes, plan)

    def lines(self) -> list[str]:
        return [s.line() for s in self.suspects] + [u.line() for u in self.undecided]


def localize(outcomes: Iterable[Outcome], cables: Pairs | None = None) -> Localization:
    """Suspects and undecided findings from `outcomes`; `cables` None means behind a switch (any
    two nodes can test), else only cabled pairs can (ring, mesh, direct)."""
    outs = list(outcomes)
    by_rail: dict[int | None, list[Outcome]] = {}
    for o in outs:
        by_rail.setdefault(o.rail, []).append(o)
    # One finding per suspect across rails: a dead node is one suspect, not one per rail.
    merged: dict[tuple[object, ...], Suspect | Undecided] = {}
    for rail in sorted(by_rail, key=lambda r: -1 if r is None else r):
        for f in _one_rail(by_rail[rail], () if rail is None else (rail,), cables is not None):
            k = (
                (f.kind, f.nodes, f.role)
                if isinstance(f, Suspect)
                else (f.nodes, f.reason, f.unclear)
            )
            merged[k] = _join(merged[k], f) if k in merged else f
    suspects = [f for f in merged.values() if isinstance(f, Suspect)]
    undecided = [f for f in merged.values() if isinstance(f, Undecided)]
    pick = _picker(outs, suspects, undecided, cables)
    return Localization(
        tuple(
            replace(
                s, confirm=pick(s.nodes[0], ("send", "receive") if s.role == "both" else (s.role,))
            )
            if s.kind == "node" and not s.confirmed and cables is None
            else s
            for s in suspects
        ),
        tuple(
            replace(u, retest=tuple(t for n, side in u.unclear for t in pick(n, (side,))))
            for u in undecided
        ),
    )


def _join(a: Suspect | Undecided, b: Suspect | Undecided) -> Suspect | Undecided:
    rails = tuple(sorted({*a.rails, *b.rails}))
    if isinstance(a, Suspect) and isinstance(b, Suspect):
        return replace(a, rails=rails, failed=a.failed + b.failed, cleared=a.cleared + b.cleared)
    return replace(a, rails=rails, failed=a.failed + b.failed)


def _one_rail(
    outs: list[Outcome], rails: tuple[int, ...], cabled: bool
) -> list[Suspect | Undecided]:
    state: dict[tuple[str, str], Outcome] = {}
    for o in outs:
        # A direction that both passed and failed counts as failed: an intermittent fault.
        if (o.src, o.dst) not in state or not o.passed:
            state[(o.src, o.dst)] = o
    nodes = list(dict.fromkeys(n for o in outs for n in (o.src, o.dst)))
    index: dict[tuple[bool, str, Side], list[Outcome]] = {}
    for o in state.values():
        index.setdefault((o.passed, o.src, "send"), []).append(o)
        index.setdefault((o.passed, o.dst, "receive"), []).append(o)
    bad = [o for o in state.values() if not o.passed]
    if bad and len(bad) == len(state) and len(nodes) >= 3:
        reason = (
            "no test passed, so the fault is common to every node (the switch, its settings or "
            "the address plan) and cannot be placed on one"
        )
        return [Undecided(tuple(nodes), rails, tuple(bad), reason)]

    def cleared(node: str, side: Side, besides: str) -> Outcome | None:
        """A passing test of `node` in `side` with a partner other than `besides`."""
        return next(
            (o for o in index.get((True, node, side), []) if _partner(o, side) != besides), None
        )

    found: list[Suspect | Undecided] = []
    blamed: set[tuple[str, str]] = set()
    for x in nodes:
        sides: list[Side] = []
        failed: list[Outcome] = []
        clear: list[Outcome] = []
        for side in _SIDES:
            mine = index.get((False, x, side), [])
            by = {
                _partner(o, side): c
                for o in mine
                if (c := cleared(_partner(o, side), _OTHER[side], x))
            }
            if len(by) >= 2 and (True, x, side) not in index:
                sides.append(side)
                failed += mine
                clear += by.values()
                blamed.update((o.src, o.dst) for o in mine)
        if sides:
            role: Role = "both" if len(sides) == 2 else sides[0]
            found.append(
                Suspect("node", (x,), role, rails, tuple(failed), tuple(clear), cabled=cabled)
            )
    groups: dict[frozenset[str], list[Outcome]] = {}
    for o in bad:
        if (o.src, o.dst) not in blamed:
            groups.setdefault(frozenset((o.src, o.dst)), []).append(o)
    for pair in groups.values():
        ok: list[Outcome] = []
        unclear: list[tuple[str, Side]] = []
        for o in pair:
            for side in _SIDES:
                node, other = (o.src, o.dst) if side == "send" else (o.dst, o.src)
                c = cleared(node, side, other)
                if c is None:
                    unclear.append((node, side))
                else:
                    ok.append(c)
        a, b = pair[0].src, pair[0].dst
        if not unclear:
            role = "both" if len(pair) == 2 else "send"
            kind: SuspectKind = "cable" if cabled else "path"
            found.append(Suspect(kind, (a, b), role, rails, tuple(pair), tuple(ok), cabled=cabled))
            continue
        candidates = tuple(dict.fromkeys(n for n, _ in unclear))
        why = "; ".join(
            f"{n} has no passing test with a partner other than {b if n == a else a}"
            for n in candidates
        )
        reason = (
            f"{why}, so the schedule cannot tell {_names(candidates)} from "
            f"{'the cable' if cabled else 'the path'} between {a} and {b}"
        )
        found.append(
            Undecided(candidates, rails, tuple(pair), reason, tuple(dict.fromkeys(unclear)))
        )
    return found


def _picker(
    outs: list[Outcome], suspects: list[Suspect], undecided: list[Undecided], cables: Pairs | None
) -> Callable[[str, Sequence[Side]], tuple[Transfer, ...]]:
    """Third partners for confirm and retest tests: nodes that pass elsewhere and are neither
    suspects nor candidates, the least used first, never a direction already measured."""
    involved = {n for s in suspects if s.kind == "node" for n in s.nodes} | {
        n for u in undecided for n in u.nodes
    }
    used = {
        n: 0
        for n in dict.fromkeys(n for o in outs if o.passed for n in (o.src, o.dst))
        if n not in involved
    }
    tested = {(o.src, o.dst) for o in outs}
    near = {c for a, b in cables or () for c in ((a, b), (b, a))}

    def pick(node: str, sides: Sequence[Side]) -> tuple[Transfer, ...]:
        out: list[Transfer] = []
        for side in sides:
            way = (lambda w: (node, w)) if side == "send" else (lambda w: (w, node))
            choices = [
                w
                for w in used
                if w != node and way(w) not in tested and (cables is None or (node, w) in near)
            ]
            if choices:
                # A partner never met in either direction first, then the least used.
                w = min(
                    choices, key=lambda c: ((node, c) in tested or (c, node) in tested, used[c])
                )
                used[w] += 1
                tested.add(way(w))
                out.append(Transfer(*way(w)))
        return tuple(out)

    return pick


def _partner(o: Outcome, side: Side) -> str:
    return o.dst if side == "send" else o.src


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


def suspects(
    loose: Sequence[Failure], passed: Sequence[Failure], cables: Pairs | None
) -> list[tuple[Finding, tuple[Obj, ...], tuple[str, ...]]]:
    """(finding, objects, items) per suspect node; `cables` None: behind a switch."""
    out: list[tuple[Finding, tuple[Obj, ...], tuple[str, ...]]] = []
    for test in dict.fromkeys(f.item.split("[", 1)[0] for f in loose if ends(f.path)):
        outcomes: list[Outcome] = []
        failed: dict[str, tuple[str, str]] = {}
        for f, ok in [(f, False) for f in loose] + [(f, True) for f in passed]:
            found = ends(f.path)
            if found is None or f.item.split("[", 1)[0] != test:
                continue
            a, b, rail = found
            # An item measures both directions of its link (or it is one direction).
            outcomes += [Outcome(a, b, ok, rail), Outcome(b, a, ok, rail)]
            if not ok:
                failed[f.item] = (a, b)
        for suspect in localize(outcomes, cables).suspects:
            x = suspect.nodes[0]
            mine = tuple(i for i, pair in failed.items() if x in pair)
            if suspect.kind == "node" and mine:
                finding = Finding(RULES["node_suspect"], x, (x,), suspect.line())
                out.append((finding, (node_obj(x),), mine))
    return out
