"""pytest-html 4 hooks: sortable Node / Rail / Measured / Expected columns and, for a failure,
the likely cause and fix above the log. Every hook is optional, so `-p no:html` works.

Noise pytest-html would add is left out: a skipped test shows its reason as text under its own
name (not `::setup` and a raw tuple); cause and fix appear once, in the box, not again in the
log; the Duration column goes, because an item's time is not its measurement's (the first item
of a phase waits for the whole phase, the others assert on its cached result)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, MutableSequence, Sequence

    from pytest_sparkfabric.report.diff import Baseline
    from pytest_sparkfabric.results import Results

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
NOWRAP = {"sfnode", "sfrail"}  # short names a wrap would break (`spark-` / `1`)
ENVIRONMENT_LAST = (
    "<style>body{display:flex;flex-direction:column}"
    "body>#environment-header,body>#environment{order:1;align-self:flex-start}</style>"
)
"""pytest-html puts its Environment table above the summary: the verdict goes first, the table
after the results (the page's elements keep their source order otherwise)."""
# Lines of a failure message that say why and what to do (verdict.fail, Finding.render).
DIAGNOSIS_HEADS = ("Likely cause: ", "Possible cause: ", "Also likely: ", "Also possible: ")


def properties(report: pytest.TestReport) -> dict[str, str]:
    """The test's recorded properties (the first value of each name)."""
    out: dict[str, str] = {}
    for key, value in getattr(report, "user_properties", ()):
        out.setdefault(str(key), str(value))
    return out


def _cell_text(value: str) -> str:
    # One line: pytest-html reads a sortable cell's value with a single-line pattern.
    return escape(" ".join(value.split()))


def _is_duration(cell: str) -> bool:
    return 'data-column-type="duration"' in cell or 'class="col-duration"' in cell


def skip_reason(report: pytest.TestReport) -> str | None:
    """A skipped test's reason as a sentence (pytest keeps it as (file, line, 'Skipped: ...'))."""
    if not report.skipped:
        return None
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr or "")
    return reason.removeprefix("Skipped: ")


def diagnosis_html(props: dict[str, str], lines: Sequence[str] = ()) -> str | None:
    """The cause-and-fix box shown above a failed test's log, or None without a diagnosis.

    `lines` are the message's own diagnosis lines (each cause with its evidence, then its fix);
    without them the box shows the recorded cause and fix."""
    if "cause" not in props and "fix" not in props:
        return None
    rows = [(t, props.get(k, "")) for t, k in (("Measured", "measured"), ("Expected", "expected"))]
    if lines:
        rows += [(head, rest) for head, _, rest in (ln.partition(": ") for ln in lines)]
    else:
        rows += [(t, props.get(k, "")) for t, k in (("Likely cause", "cause"), ("Fix", "fix"))]
    body = "<br>".join(f"<b>{escape(t)}:</b> {escape(v)}" for t, v in rows if v)
    rule = f' data-rule="{escape(props["rule"])}"' if props.get("rule") else ""
    return f'<div class="sparkfabric-diagnosis"{rule} style="{STYLE}">{body}</div>'


def split_diagnosis(message: str) -> tuple[list[str], list[str]]:
    """A failure message as (its other lines, its diagnosis lines: causes and their fixes)."""
    rest: list[str] = []
    diagnosis: list[str] = []
    for line in message.splitlines():
        if line.startswith(DIAGNOSIS_HEADS) or (diagnosis and line.startswith("Fix: ")):
            diagnosis.append(line)
        else:
            rest.append(line)
    return rest, diagnosis


class HtmlReport:
    """The pytest-html hooks, registered as a plugin object with the run's ReportData."""

    def __init__(
        self, results: Callable[[], Results | None], baseline: Baseline | None = None
    ) -> None:
        self.results = results
        self.baseline = baseline
        self.page: Any = None
        """pytest-html's report object, whose title is set once the verdict is known."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: MutableSequence[str]) -> None:
        for offset, (kind, title, _) in enumerate(COLUMNS):
            style = ' style="white-space:nowrap"' if kind in NOWRAP else ""
            cells.insert(
                FIRST + offset,
                f'<th class="sortable" data-column-type="{kind}"{style}>{title}</th>',
            )
        cells[:] = [c for c in cells if not _is_duration(c)]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(
        self, report: pytest.TestReport, cells: MutableSequence[str]
    ) -> None:
        props = properties(report)
        for offset, (kind, _, key) in enumerate(COLUMNS):
            text = _cell_text(props.get(key, ""))
            style = ' style="white-space:nowrap"' if kind in NOWRAP else ""
            cells.insert(FIRST + offset, f'<td class="col-{kind}"{style}>{text}</td>')
        cells[:] = [c for c in cells if not _is_duration(c)]
        if report.skipped and report.when == "setup":
            # A test skipped by a fixture is still that test, not its `::setup` phase.
            cells[1] = cells[1].replace(f"{report.nodeid}::setup</td>", f"{report.nodeid}</td>")

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(
        self, report: pytest.TestReport, data: MutableSequence[str]
    ) -> None:
        reason = skip_reason(report)
        if reason is not None:
            data[:] = [f"Skipped: {escape(reason)}\n"]
            return
        if not report.failed:
            return
        props = properties(report)
        rest, lines = split_diagnosis(report.longreprtext)
        box = diagnosis_html(props, lines)
        if box is None:
            return
        if lines and data and data[0] == escape(report.longreprtext) + "\n":
            # The causes and fixes are in the box: the log keeps what was measured and expected.
            data[0] = escape("\n".join(rest)) + "\n"
        data.insert(0, box)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        # Asked when the session starts, long before the verdict: kept, and named at the end.
        self.page = report

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        doc = self.results()
        if doc is not None and self.page is not None:
            self.page.title = f"sparkfabric: {doc.cluster.name} {doc.verdict.upper()}"

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self,
        prefix: MutableSequence[str],
        summary: MutableSequence[str],
        postfix: MutableSequence[str],
        session: pytest.Session,
    ) -> None:
        doc = self.results()
        if doc is None:
            return
        from pytest_sparkfabric.report.page import fragment

        baseline = None
        if self.baseline is not None:
            from pytest_sparkfabric.report.diff import compare

            base = self.baseline
            baseline = (base.name, compare(base.doc, doc, bw_tolerance_pct=base.tolerance_pct))
        prefix.append(ENVIRONMENT_LAST + fragment(doc, baseline=baseline))
