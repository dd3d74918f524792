"""Root causes: a run's failed items grouped by what explains them (pure). Items whose likely
causes are the same rule on the same objects share one, and so do items whose cause follows from
a deeper one on a meeting object (`DEEPER`); checks of one object are grouped first, so their
causes collect the failures of the paths through them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RuleId
from pytest_sparkfabric.objects import Blame, Obj, ids, meet
from pytest_sparkfabric.results import Cause
from pytest_sparkfabric.shell import plural

DEEPER: Mapping[RuleId, tuple[RuleId, ...]] = MappingProxyType({
    "link_down": ("autoneg_failed",),
    "speed_degraded": ("autoneg_failed",),
    "mtu_path": ("mtu_mismatch", "mtu_local"),
    "mtu_local": ("mtu_mismatch",),
    "unreachable_rail": ("link_down", "autoneg_failed", "admin_down", "duplicate_ip",
                         "address_mismatch"),
})  # fmt: skip
"""A rule -> the rules whose cause, on a meeting object, explains it too."""

SETTINGS: frozenset[RuleId] = frozenset({
    "nccl_socket", "nccl_single_hca", "nccl_wrong_hca", "ipv6_enabled", "rp_filter_strict",
    "arp_flux", "duplicate_ip",
})  # fmt: skip
"""Rules about one setting (a sysctl, an NCCL variable, an address plan): wherever it is wrong,
it is one root cause naming every object that has it."""

BY_REASON: frozenset[RuleId] = frozenset({"prerequisite_missing", "not_measured"})
"""Rules whose cause is one missing thing wherever it is missing (perftest on two nodes): one
root cause per cause text, naming every object it stopped."""

BLAMES: Mapping[RuleId, Blame] = MappingProxyType({
    "link_down": "cable", "marginal_cable": "cable", "ber_high": "cable",
    "post_fec_errors": "cable", "speed_degraded": "cable",
    "firewall": "node", "rx_discards": "node",
    "egress_rate_cap": "leg",
})  # fmt: skip
"""Rules whose fault, seen on a rail or a link, is one thing beyond it: the cable the rail runs
over (a slow or dark cable shows on both its rails and both its ends), the node (its firewall,
its NIC's receive buffer), or the switch leg toward the node (a cap on its egress)."""

_EVIDENCE_SHOWN = 6
_EVIDENCE_LISTED = 2


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed item: its id, the objects on its path, the causes its message named."""

    item: str
    path: tuple[Obj, ...] = ()
    blamed: tuple[Finding, ...] = ()


Localizer = Callable[
    [Sequence[Failure], Sequence[Failure]],
    Sequence[tuple[Finding, Sequence[Obj], Sequence[str]]],
]
"""(unexplained failures, passed items) -> (finding, objects it blames, items it explains)."""


def numbered(n: int, c: Cause, *, banner: bool = False) -> list[str]:
    """Cause `n` as `1. [rule] objects: cause`, then its fix, evidence and what it explains;
    the banner's says nothing of possible and leaves the fix as it is."""
    guess = "" if c.certain or banner else " (possible)"
    out = [f"  {n}. [{c.rule}] {', '.join(c.objects) or 'the cluster'}: {c.cause}{guess}"]
    out.append(f"     Fix: {c.fix if banner else c.fix.rstrip('.') + '.'}")
    out += [f"     seen: {e}" for e in c.evidence[:_EVIDENCE_LISTED]]
    return out + ([f"     explains {plural(len(c.items), 'check')}"] if c.items else [])


def lines(causes: Sequence[Cause]) -> list[str]:
    """The causes numbered (`sparkfabric explain`)."""
    if not causes:
        return ["no root causes"]
    head = [plural(len(causes), "root cause") + ":"]
    return head + [line for n, c in enumerate(causes, 1) for line in numbered(n, c)]


@dataclass
class _Group:
    finding: Finding
    objects: tuple[Obj, ...]
    items: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    """Each object's own fix, for a setting wrong on several (`on spark-1, set ...`)."""

    def takes(self, f: Finding, path: Sequence[Obj]) -> bool:
        rule, mine = f.rule.id, self.finding.rule.id
        if rule in BY_REASON:
            return mine == rule and self.finding.cause_text == f.cause_text
        if mine not in (rule, *DEEPER.get(rule, ())):
            return False
        return (rule in SETTINGS and mine == rule) or meet(self.objects, f.objects or path)

    def widen(self, objects: Sequence[Obj], f: Finding) -> None:
        """A setting found wrong on one more object: the cause names it, and its fix."""
        rule = self.finding.rule.id
        if rule in BY_REASON or (rule in SETTINGS and objects):
            self.objects = tuple({o.id: o for o in (*self.objects, *objects)}.values())
        if rule in SETTINGS and objects and f.fix_text not in self.fixes:
            self.fixes.append(f.fix_text)

    def add(self, item: str, f: Finding) -> None:
        self.items.append(item)
        seen = f"{f.where}: {f.evidence}" if f.evidence else f.where
        if seen and seen not in self.evidence:
            self.evidence.append(seen)

    def cause(self, where: tuple[str, ...] = ()) -> Cause:
        """The group as one root cause; `where` names it when it blames no object."""
        f = self.finding
        return Cause(
            rule=f.rule.id,
            cause=f.cause_text,
            fix="; ".join(self.fixes) if len(self.fixes) > 1 else f.fix_text,
            objects=ids(self.objects) or where,
            evidence=tuple(self.evidence[:_EVIDENCE_SHOWN]),
            items=tuple(self.items),
            certain=f.certain,
        )


def _deepest(groups: list[_Group]) -> list[_Group]:
    """Each group whose cause is the consequence of a deeper one on a meeting object, folded
    into it (whichever of the two failed first)."""
    while True:
        deeper = DEEPER.get
        found = next(
            (
                (g, h)
                for g in groups
                for h in groups
                if h.finding.rule.id in deeper(g.finding.rule.id, ()) and meet(h.objects, g.objects)
            ),
            None,
        )
        if found is None:
            return groups
        g, home = found
        home.items += g.items
        home.evidence += [e for e in g.evidence if e not in home.evidence]
        groups.remove(g)


def _pins(failure: Failure) -> bool:
    """A check of one node or one rail: its cause is about that object itself."""
    return len(failure.path) == 1 and failure.path[0].kind in ("node", "rail", "leg")


def group(
    failures: Sequence[Failure],
    passed: Sequence[Failure] = (),
    localize: Localizer | None = None,
) -> tuple[Cause, ...]:
    """The root causes of `failures`. Failed items no finding explains go to `localize` with
    the `passed` ones, which may name suspects for them (a node that fails with two or more
    partners which pass with others: `measure.localize.suspects`)."""
    groups: list[_Group] = []
    for failure in sorted(failures, key=lambda f: not _pins(f)):
        if not failure.blamed:
            continue
        likely = failure.blamed[0]
        home = next((g for g in groups if g.takes(likely, failure.path)), None)
        if home is None:
            home = _Group(likely, likely.objects or failure.path, fixes=[likely.fix_text])
            groups.append(home)
        elif _pins(failure) or likely.rule.id in BY_REASON:
            home.widen(likely.objects or failure.path, likely)
        home.add(failure.item, likely)
    placed = {i for g in groups for i in g.items}
    groups = _deepest(groups)
    loose = [f for f in failures if f.item not in placed]
    for finding, objects, items in localize(loose, passed) if localize else ():
        g = _Group(finding, tuple(objects))
        for item in items:
            g.add(item, finding)
        groups.append(g)
    groups.sort(key=lambda g: (not g.finding.certain, -len(g.items)))
    return tuple(g.cause() for g in groups)


def ends(path: Sequence[Obj]) -> tuple[str, str, int | None] | None:
    """The two nodes (and the rail, if one) of a node-to-node item's path."""
    if len(path) != 1 or path[0].kind not in ("link", "direction", "pair"):
        return None
    if len(nodes := path[0].nodes) != 2:
        return None
    return nodes[0], nodes[1], path[0].rail


def of_findings(findings: Sequence[Finding]) -> tuple[Cause, ...]:
    """Findings with no test items behind them (saved outputs): one root cause each, named by
    the objects they blame or, without any, where they were seen."""
    return tuple(
        _Group(f, f.objects, evidence=[f"{f.where}: {f.evidence}"]).cause(where=(f.where,))
        for f in findings
    )
