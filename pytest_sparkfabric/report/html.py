"""The HTML report: its sections (one page for `sparkfabric report html`, or a fragment for
pytest-html's summary), and the pytest-html 4 hooks: sortable Node / Rail / Measured / Expected
columns and, for a failure, the likely cause and fix above the log. Every hook is optional, so
`-p no:html` works. Everything is inline (CSS, SVG, no script); all CSS is scoped under
`.sf-report`, so it leaves pytest-html's own table alone.

Noise pytest-html would add is left out: a skipped test shows its reason as text under its own
name (not `::setup` and a raw tuple); cause and fix appear once, in the box, not again in the
log; the Duration column goes, because an item's time is not its measurement's (the first item
of a phase waits for the whole phase, the others assert on its cached result)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.report.style import esc

if TYPE_CHECKING:
    from collections.abc import Callable, MutableSequence

    from pytest_sparkfabric.report.diff import Baseline, Diff
    from pytest_sparkfabric.results import PreflightNode, Results

NOWRAP = ' style="white-space:nowrap"'  # short names a wrap would break (`spark-` / `1`)
# (column type / css suffix, title, user property, style), after Result and Test
COLUMNS = (
    ("sfnode", "Node", "node", NOWRAP),
    ("sfrail", "Rail", "rail", NOWRAP),
    ("sfmeasured", "Measured", "measured", ""),
    ("sfexpected", "Expected", "expected", ""),
)
COLUMNS_TITLES = tuple((kind, title) for kind, title, *_ in COLUMNS)
STYLE = (
    "border-left:4px solid #c00;background:#fff4f4;padding:6px 10px;margin:4px 0 8px;"
    "white-space:normal;font-family:sans-serif"
)
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


def _place(cells: MutableSequence[str], ours: list[str]) -> None:
    """Our columns after Result and Test, and pytest-html's Duration column gone."""
    cells[2:2] = ours
    cells[:] = [c for c in cells if 'type="duration"' not in c and '"col-duration"' not in c]


def diagnosis_html(props: dict[str, str], lines: list[str] | None = None) -> str | None:
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
    body = "<br>".join(f"<b>{esc(t)}:</b> {esc(v)}" for t, v in rows if v)
    rule = f' data-rule="{esc(props["rule"])}"' if props.get("rule") else ""
    return f'<div class="sparkfabric-diagnosis"{rule} style="{STYLE}">{body}</div>'


class HtmlReport:
    """The pytest-html hooks, registered as a plugin object with the run's results."""

    def __init__(
        self, results: Callable[[], Results | None], baseline: Baseline | None = None
    ) -> None:
        self.results = results
        self.baseline = baseline
        self.page: Any = None
        """pytest-html's report object, whose title is set once the verdict is known."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: MutableSequence[str]) -> None:
        _place(
            cells,
            [f'<th class="sortable" data-column-type="{k}"{s}>{t}</th>' for k, t, _, s in COLUMNS],
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(
        self, report: pytest.TestReport, cells: MutableSequence[str]
    ) -> None:
        props = properties(report)
        # One line: pytest-html reads a sortable cell's value with a single-line pattern.
        text = {k: esc(" ".join(props.get(key, "").split())) for k, _, key, _ in COLUMNS}
        _place(cells, [f'<td class="col-{k}"{s}>{text[k]}</td>' for k, _, _, s in COLUMNS])
        if report.skipped and report.when == "setup":
            # A test skipped by a fixture is still that test, not its `::setup` phase.
            cells[1] = cells[1].replace(f"{report.nodeid}::setup</td>", f"{report.nodeid}</td>")

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(
        self, report: pytest.TestReport, data: MutableSequence[str]
    ) -> None:
        if report.skipped:  # its reason as a sentence (pytest keeps (file, line, 'Skipped: ...'))
            longrepr = report.longrepr
            reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr or "")
            data[:] = [f"Skipped: {esc(reason.removeprefix('Skipped: '))}\n"]
            return
        if not report.failed:
            return
        message = report.longreprtext
        rest: list[str] = []
        lines: list[str] = []  # the causes and their fixes
        for line in message.splitlines():
            diagnosis = line.startswith(DIAGNOSIS_HEADS) or (lines and line.startswith("Fix: "))
            (lines if diagnosis else rest).append(line)
        if (box := diagnosis_html(properties(report), lines)) is None:
            return
        if lines and data and data[0] == esc(message) + "\n":
            # The causes and fixes are in the box: the log keeps what was measured and expected.
            data[0] = esc("\n".join(rest)) + "\n"
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
    def pytest_html_results_summary(self, prefix: MutableSequence[str]) -> None:
        doc, base = self.results(), self.baseline
        if doc is None:
            return
        from pytest_sparkfabric.report.diff import compare

        against = None
        if base is not None:
            against = base.name, compare(base.doc, doc, bw_tolerance_pct=base.tolerance_pct)
        prefix.append(ENVIRONMENT_LAST + fragment(doc, against))


CSS = """
.sf-report{font-family:"DejaVu Sans",Verdana,sans-serif;color:#212121;max-width:1400px}
.sf-report h2{font-size:1.15em;margin:1.2em 0 .4em}
.sf-report .sf-verdict{padding:12px 16px;border-radius:6px;font-size:1.1em}
.sf-report .sf-verdict-word{font-size:1.6em;font-weight:bold;letter-spacing:.04em;
  margin-right:.6em}
.sf-report .sf-counts{margin:.5em 0}
.sf-report .sf-warning{color:#8d4e00}
.sf-report .sf-causes>li{margin:.6em 0;padding:.2em .8em;border-left:4px solid #c62828;
  background:#fff5f5}
.sf-report .sf-causes p{margin:.25em 0}
.sf-report .sf-rule{color:#666;font-size:.9em}
.sf-report code.sf-object{background:#eee;padding:0 4px;border-radius:3px}
.sf-report details{margin:.3em 0}
.sf-report summary{cursor:pointer}
.sf-report .sf-picture{overflow-x:auto;border:1px solid #ddd;border-radius:6px;padding:4px}
.sf-report .sf-charts{display:flex;flex-wrap:wrap;gap:16px}
.sf-report figure.sf-chart{margin:0;max-width:100%}
.sf-report figure.sf-chart svg{max-width:100%;height:auto}
.sf-report figcaption{font-size:.9em;color:#444;max-width:60em}
.sf-report table{border-collapse:collapse;font-size:.9em}
.sf-report th,.sf-report td{border:1px solid #ddd;padding:3px 6px;vertical-align:top}
.sf-report th{background:#f3f3f3;text-align:left}
.sf-report td.sf-differs{background:#fff3e0}
.sf-report td.sf-none{color:#999}
.sf-report .sf-inventory-wrap{overflow-x:auto}
"""


def _preflight(nodes: tuple[PreflightNode, ...]) -> str:
    """One row per node: what the preflight found missing there and its fix."""
    rows = []
    for n in nodes:
        if n.error or not n.missing:
            what = f"not checked: {esc(n.error)}" if n.error else "nothing missing"
            rows.append(f"<tr><td>{esc(n.node)}</td><td colspan=2>{what}</td></tr>")
        for g in n.missing:
            note = " (advisory)" if g.advisory else ""
            rows.append(
                f"<tr><td>{esc(n.node)}</td><td>{esc(g.reason)}{note}</td>"
                f"<td><code>{esc(g.fix)}</code></td></tr>"
            )
    head = "<tr><th>node</th><th>missing</th><th>fix</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def fragment(doc: Results, baseline: tuple[str, Diff] | None = None) -> str:
    """The report's sections in one <div> with their CSS (pytest-html's summary prefix), in
    reading order: verdict first, then what changed against the baseline, the fabric, the
    charts, the cable inventory and what the nodes have."""
    from pytest_sparkfabric.report import banner, build, charts, inventory, picture
    from pytest_sparkfabric.report.diff import html as diff_html

    drawn = build.picture(doc)
    sections = [("verdict", "", banner.html(doc))]
    if baseline is not None:
        name, d = baseline
        sections.append(("baseline", f"Against the baseline {name}", diff_html(d, name)))
    svg = picture.render(drawn)
    sections.append(("fabric", "The fabric as cabled", f'<div class="sf-picture">{svg}</div>'))
    if figures := "".join(
        f'<figure class="sf-chart" data-chart="{esc(c.key)}">{c.svg}<figcaption><b>'
        f"{esc(c.title)}.</b> {esc(c.caption)}</figcaption></figure>"
        for c in charts.render(doc)
    ):
        sections.append(("charts", "Measurements", f'<div class="sf-charts">{figures}</div>'))
    if doc.cables:
        table = inventory.html(build.cable_rows(doc, drawn))
        sections.append(("cables", "Cables", f'<div class="sf-inventory-wrap">{table}</div>'))
    if doc.preflight:
        sections.append(("preflight", "What the nodes have", _preflight(doc.preflight)))
    parts = [f'<div class="sf-report"><style>{CSS}</style>']
    for key, title, body in sections:
        heading = f"<h2>{esc(title)}</h2>" if title else ""
        parts.append(f'<section class="sf-section" id="sf-{key}">{heading}{body}</section>')
    return "".join(parts) + "</div>"


def page(doc: Results, *, baseline: tuple[str, Diff] | None = None) -> str:
    """A whole HTML document (`sparkfabric report html`)."""
    title = f"sparkfabric: {doc.cluster.name} {doc.verdict.upper()}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title></head><body>{fragment(doc, baseline)}</body></html>\n"
    )
