"""pytest-html 4 hooks: sortable Node / Rail / Measured / Expected columns and, for a failure,
the likely cause and fix above the log. Every hook is optional, so `-p no:html` works."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import MutableSequence

# (column type / css suffix, title, user property)
COLUMNS = (
    ("sfnode", "Node", "node"),
    ("sfrail", "Rail", "rail"),
    ("sfmeasured", "Measured", "measured"),
    ("sfexpected", "Expected", "expected"),
)
COLUMNS_TITLES = tuple((kind, title) for kind, title, _ in COLUMNS)
FIRST = 2  # after Result and Test
STYLE = (
    "border-left:4px solid #c00;background:#fff4f4;padding:6px 10px;margin:4px 0 8px;"
    "white-space:normal;font-family:sans-serif"
)


def properties(report: pytest.TestReport) -> dict[str, str]:
    """The test's recorded properties (the first value of each name)."""
    out: dict[str, str] = {}
    for key, value in getattr(report, "user_properties", ()):
        out.setdefault(str(key), str(value))
    return out


def _cell_text(value: str) -> str:
    # One line: pytest-html reads a sortable cell's value with a single-line pattern.
    return escape(" ".join(value.split()))


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_header(cells: MutableSequence[str]) -> None:
    for offset, (kind, title, _) in enumerate(COLUMNS):
        cells.insert(FIRST + offset, f'<th class="sortable" data-column-type="{kind}">{title}</th>')


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: MutableSequence[str]) -> None:
    props = properties(report)
    for offset, (kind, _, key) in enumerate(COLUMNS):
        text = _cell_text(props.get(key, ""))
        cells.insert(FIRST + offset, f'<td class="col-{kind}">{text}</td>')


def diagnosis_html(props: dict[str, str]) -> str | None:
    """The cause-and-fix box shown above a failed test's log, or None without a diagnosis."""
    if "cause" not in props and "fix" not in props:
        return None
    rows = [
        (title, props[key])
        for title, key in (
            ("Measured", "measured"),
            ("Expected", "expected"),
            ("Likely cause", "cause"),
            ("Fix", "fix"),
        )
        if props.get(key)
    ]
    body = "<br>".join(f"<b>{escape(t)}:</b> {escape(v)}" for t, v in rows)
    rule = f' data-rule="{escape(props["rule"])}"' if props.get("rule") else ""
    return f'<div class="sparkfabric-diagnosis"{rule} style="{STYLE}">{body}</div>'


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_html(report: pytest.TestReport, data: MutableSequence[str]) -> None:
    if not report.failed:
        return
    box = diagnosis_html(properties(report))
    if box is not None:
        data.insert(0, box)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(
    prefix: MutableSequence[str],
    summary: MutableSequence[str],
    postfix: MutableSequence[str],
    session: pytest.Session,
) -> None:
    from pytest_sparkfabric.plugin import get_session

    s = get_session(session.config)
    if s is None:
        return
    c = s.cluster
    src = c.source.name if c.source else "cluster.yaml"
    prefix.append(
        f"<p>sparkfabric: {escape(src)}: {escape(c.topology)}, {len(c.nodes)} nodes "
        f"({escape(', '.join(n.name for n in c.nodes))}), transport {escape(c.spec.transport)}, "
        f"MTU {c.mtu}</p>"
    )
    for warning in s.warnings:
        prefix.append(f'<p class="sparkfabric-warning"><strong>{escape(warning)}</strong></p>')
