"""Suspects for failed node-to-node items no finding explains, by `localize`'s rule.

A node that fails with two or more partners, while those partners pass with others, is named
(its NIC port, its cable or its switch leg), not the pairs. Outcomes are per test function, so
one-rail and both-rail tests do not clear each other.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_sparkfabric.diagnosis.causes import Failure, ends
from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure.localize import Outcome, localize
from pytest_sparkfabric.objects import Obj, node


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
                out.append((finding, (node(x),), mine))
    return out
