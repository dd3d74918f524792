"""How a test states what it measured, what it expected and, on failure, why and what to do.

Everything recorded lands in `item.user_properties`, so JUnit XML carries it as <property>
elements, the HTML report shows it as columns, and the JSON results keep it.
"""

from __future__ import annotations

from typing import NoReturn

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES, Rule, RuleId


def _text(value: object) -> str:
    if isinstance(value, float):
        return (
            f"{value:.4g}"
            if abs(value) < 1e-3 and value
            else f"{value:.2f}".rstrip("0").rstrip(".")
        )
    return str(value)


class Verdict:
    """Bound to one test item; tests call it to record values and to fail with a diagnosis."""

    def __init__(self, item: pytest.Item) -> None:
        self.item = item

    def __call__(self, **props: object) -> None:
        """Record properties (node=, rail=, measured=, expected=, source=, ...)."""
        for key, value in props.items():
            if value is not None:
                self.item.user_properties.append((key, _text(value)))

    def fail(self, message: str, rule: RuleId | Rule | None = None, **props: object) -> NoReturn:
        """Fail with `message` (where, what was seen, what was expected) plus cause and fix."""
        self(**props)
        text = message
        r = RULES[rule] if isinstance(rule, str) else rule
        if r is not None:
            self(cause=r.cause, fix=r.fix, rule=r.id)
            text += f"\nLikely cause: {r.cause}\nFix: {r.fix}"
        pytest.fail(text, pytrace=False)

    def require(
        self, ok: bool, message: str, rule: RuleId | Rule | None = None, **props: object
    ) -> None:
        self(**props)
        if not ok:
            self.fail(message, rule)
