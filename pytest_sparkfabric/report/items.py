"""One pytest item as the results document has it: a stable id, the objects it is about, its
outcome in the document's terms, and its recorded figures.

pytest's node ids are relative to the rootdir, which moves with the working directory and with how
`--cluster` is spelled (as two words its path is taken for a test path when pytest picks the
rootdir), so the shipped suite's items get ids relative to the suite itself: `test_mtu.py::
test_mtu[spark-1:rail0]` from any directory and any install location.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

NOT_MEASURED = "not measured: "
"""How an item that could not measure fails (`session.pytest_runtest_call`)."""
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")
_FIGURES = {
    "measured_gbps": "Gb/s",
    "measured_gbytes_s": "GB/s",
}
"""Recorded numeric figures and their units (verdict's `measured_gbps=`, ...)."""


def stable_id(nodeid: str, path: Path | None, suite: Path) -> str:
    """The item's id relative to the shipped suite when it is one of the suite's, else pytest's."""
    if path is None:
        return nodeid
    try:
        rel = path.resolve().relative_to(suite.resolve())
    except ValueError:
        return nodeid
    _, sep, rest = nodeid.partition("::")
    return f"{rel.as_posix()}{sep}{rest}"


def junit_names(stable: str) -> tuple[str, str]:
    """(classname, name) as JUnit XML spells a test id (pytest's own mangling, on a stable id)."""
    path, _, rest = stable.partition("::")
    parts = [p for p in rest.split("::") if p]
    module = path.removesuffix(".py").replace("/", ".")
    if not parts:
        return module, module
    return ".".join([module, *parts[:-1]]), parts[-1]


def objects_of(item: pytest.Item) -> list[str]:
    """The ids (report.objects grammar) of the nodes, rails, links and pairs the item is
    parametrised with."""
    from pytest_sparkfabric.cluster import Node, Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink, Link, NodePair

    params = getattr(getattr(item, "callspec", None), "params", {})
    out: list[str] = []
    for value in params.values():
        if isinstance(value, Node):
            out.append(value.name)
        elif isinstance(value, (Rail, DirectedLink, Link, NodePair)):
            out.append(value.id)
    return list(dict.fromkeys(out))


def properties(report: pytest.TestReport) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in getattr(report, "user_properties", ()):
        out.setdefault(str(key), str(value))
    return out


def outcome_of(report: pytest.TestReport) -> str:
    """passed, failed, not_measured or skipped (a failure whose message says it could not
    measure is not_measured: it counts against acceptance, but it is not a measured failure)."""
    if report.passed:
        return "passed"
    if report.skipped:
        return "skipped"
    first = report.longreprtext.strip().splitlines()[:1]
    return "not_measured" if first and first[0].startswith(NOT_MEASURED) else "failed"


def figure(props: dict[str, str]) -> tuple[float | str | None, str | None]:
    for key, unit in _FIGURES.items():
        if key in props:
            try:
                return float(props[key]), unit
            except ValueError:
                pass
    text = props.get("measured")
    if text is None:
        return None, None
    m = _NUMBER.match(text)
    if m and m[2] and " " not in m[2] and not m[2][0].isdigit():
        return float(m[1]), m[2]
    return text, None


def message_of(report: pytest.TestReport) -> str | None:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if report.failed:
        return report.longreprtext
    return None


def row(report: pytest.TestReport, stable: str, objects: list[str]) -> dict[str, Any]:
    """The document's entry for one item (schema `items`), with every recorded property."""
    props = properties(report)
    measured, unit = figure(props)
    rail = props.get("rail")
    return {
        "id": stable,
        "outcome": outcome_of(report),
        "node": props.get("node") or (props["nodes"].split(",")[0] if "nodes" in props else None),
        "rail": rail,
        "measured": measured,
        "expected": props.get("expected"),
        "unit": unit,
        "objects": objects,
        "rule": props.get("rule"),
        "message": message_of(report),
        "duration_s": round(report.duration, 3),
        "properties": props,
    }
