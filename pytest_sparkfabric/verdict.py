"""How a test states what it measured, what it expected and, on failure, why and what to do.
Values go to `item.user_properties` (JUnit, HTML and JSON carry them); what a failure blames,
warnings and the item's objects go in its stash, for the session's one report hook."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES, Rule, RuleId
from pytest_sparkfabric.objects import Obj, ids
from pytest_sparkfabric.results import WarningNote
from pytest_sparkfabric.shell import visible

BLAMED = pytest.StashKey[tuple[Finding, ...]]()
"""On a failed item: the causes its failure message gave, the likely one first."""
PATH = pytest.StashKey[tuple[Obj, ...]]()
"""On an item whose failure is about more than its parameters: what it is about."""
WARNINGS = pytest.StashKey[list[WarningNote]]()
"""On an item that passed with something worth reading."""


def item_path(item: pytest.Item) -> tuple[Obj, ...]:
    """The objects on an item's path, from its parameters (or as the test widened it with
    `Verdict.about`); empty: the whole cluster."""
    if PATH in item.stash:
        return item.stash[PATH]
    params = getattr(getattr(item, "callspec", None), "params", {})
    return tuple(o for value in params.values() for o in objects.path(value))


def widen(item: pytest.Item, objs: Sequence[Obj]) -> None:
    """The item's failure is about `objs` as well as its parameters."""
    item.stash[PATH] = tuple({o.id: o for o in (*item_path(item), *objs)}.values())


def _text(value: object) -> str:
    if not isinstance(value, float):
        return str(value)
    if abs(value) < 1e-3 and value:
        return f"{value:.4g}"
    return f"{value:.2f}".rstrip("0").rstrip(".")


class Verdict:
    """Bound to one test item; tests call it to record values and to fail with a diagnosis."""

    def __init__(self, item: pytest.Item) -> None:
        self.item = item

    def __call__(self, **props: object) -> None:
        """Record properties (node=, rail=, measured=, expected=, source=, ...)."""
        self.item.user_properties += [(k, _text(v)) for k, v in props.items() if v is not None]

    @property
    def path(self) -> tuple[Obj, ...]:
        return item_path(self.item)

    def about(self, *objs: Obj) -> None:
        """Say the item is about more than its parameters (a cable, a switch leg, or the whole
        NCCL job: `objects.CLUSTER`); the report draws its outcome on those objects too."""
        widen(self.item, objs)

    def blame(self, found: Sequence[Finding]) -> None:
        """Keep the causes a failure names, for the session's root causes; the objects the
        likely one blames are recorded as `blames` (ids, comma-separated)."""
        self.item.stash[BLAMED] = tuple(found)
        if found and found[0].objects:
            self(blames=",".join(objects.ids(found[0].objects)))

    def warn(
        self, message: str, rule: RuleId | None = None, *, objects: Sequence[Obj] | None = None
    ) -> None:
        """The check passes, with a warning worth reading (listed under the verdict;
        `--sparkfabric-strict` fails the check on it)."""
        about = ids(self.path if objects is None else objects)
        found = WarningNote(message=visible(message), rule=rule, objects=about)
        self.item.stash.setdefault(WARNINGS, []).append(found)

    def fail(
        self,
        message: str,
        rule: RuleId | Rule | None = None,
        *,
        objects: Sequence[Obj] | None = None,
        fix: str = "",
        **props: object,
    ) -> NoReturn:
        """Fail with `message` (where, what was seen, what was expected) plus cause and fix.

        `objects`: what the rule blames where it is not the item itself (a rail without carrier
        blames its cable); `fix`: the exact setting and file, where the check knows them."""
        self(**props)
        r = RULES[rule] if isinstance(rule, str) else rule
        if r is not None:
            blamed = tuple(objects) if objects is not None else self.path
            where = message.splitlines()[0] if message else r.id
            f = Finding(r, where, (), "", fix, objects=blamed)
            self.blame([f])
            self(cause=r.cause, fix=f.fix_text, rule=r.id)
            message += f"\nLikely cause: {r.cause}\nFix: {f.fix_text}"
        pytest.fail(visible(message), pytrace=False)

    def require(
        self, ok: bool, message: str, rule: RuleId | Rule | None = None, **props: object
    ) -> None:
        self(**props)
        if not ok:
            self.fail(message, rule)
