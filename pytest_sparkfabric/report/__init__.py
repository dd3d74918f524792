"""The HTML page (inline CSS and SVG, no script), the pytest-html hooks, the JSON results, JUnit and
the terminal, each drawn from the one results document built at the run's end. A report that cannot
be written costs only itself: the others are still written, one line names the file lost."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Generator, MutableSequence, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.private_files import write_private
from pytest_sparkfabric.report import banner
from pytest_sparkfabric.report.diff import Baseline, compare
from pytest_sparkfabric.report.diff import html as diff_html
from pytest_sparkfabric.report.style import esc
from pytest_sparkfabric.results import ClusterInfo, Counts, NodeInfo, Results, verdict_of
from pytest_sparkfabric.shell import visible

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.results import Cause, Item, PreflightNode

__all__ = ["page", "register", "results_of"]

ResultsOf = Callable[[], "Results | None"]
Cells = MutableSequence[str]  # what pytest-html hands its hooks to edit
MARKUP = {"good": {"green": True, "bold": True}, "bad": {"red": True}, "warn": {"yellow": True}}
NOWRAP = ' style="white-space:nowrap"'  # short names a wrap would break (`spark-` / `1`)
# (column type / css suffix, title, user property, style), after Result and Test
COLUMNS = (
    ("sfnode", "Node", "node", NOWRAP),
    ("sfrail", "Rail", "rail", NOWRAP),
    ("sfmeasured", "Measured", "measured", ""),
    ("sfexpected", "Expected", "expected", ""),
)
STYLE = (
    "border-left:4px solid #c00;background:#fff4f4;padding:6px 10px;margin:4px 0 8px;"
    "white-space:normal;font-family:sans-serif"
)
# pytest-html puts its Environment table above the summary: the verdict first, the table after.
ENVIRONMENT_LAST = (
    "<style>body{display:flex;flex-direction:column}"
    "body>#environment-header,body>#environment{order:1;align-self:flex-start}</style>"
)
# Lines of a failure message that say why and what to do (verdict.fail, Finding.render).
DIAGNOSIS_HEADS = ("Likely cause: ", "Possible cause: ", "Also likely: ", "Also possible: ")


def properties(report: pytest.TestReport) -> dict[str, str]:
    return {str(k): str(v) for k, v in reversed(getattr(report, "user_properties", []))}


def _place(cells: Cells, ours: list[str]) -> None:
    """Our columns after Result and Test, and pytest-html's Duration column gone."""
    cells[2:2] = ours
    cells[:] = [c for c in cells if 'type="duration"' not in c and '"col-duration"' not in c]


def diagnosis_html(props: dict[str, str], lines: list[str] | None = None) -> str | None:
    """The cause-and-fix box above a failed test's log (None without a diagnosis): the message's
    own diagnosis `lines` (each cause with its evidence, then its fix), else the recorded ones."""
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


class Outputs:
    """A pytest plugin: the JSON results file, the pytest-html hooks, the terminal's last lines."""

    def __init__(self, results: ResultsOf, json: Path | None, baseline: Baseline | None) -> None:
        self.results = results
        self.json_path = json
        self.baseline = baseline
        self.lost: list[str] = []
        self.page: Any = None  # pytest-html's report, titled once the verdict is known

    def lose(self, what: str, exc: OSError) -> None:
        line = f"sparkfabric: could not write {what}: {exc.strerror or exc}"
        if line not in self.lost:
            self.lost.append(line)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        doc = self.results()
        if doc is not None and self.page is not None:
            self.page.title = f"sparkfabric: {doc.cluster.name} {doc.verdict.upper()}"
        if doc is None or self.json_path is None or hasattr(session.config, "workerinput"):
            return
        try:  # 0600: it names hosts, users and addresses
            write_private(self.json_path, doc.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            self.lose(str(self.json_path), exc)
            if not exc.filename:  # a write that failed part way: nothing half written stays
                with contextlib.suppress(OSError):
                    self.json_path.unlink()

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        # Outermost wrapper: after pytest's short test summary, right above its last line.
        yield
        doc = self.results()
        if doc is not None and terminalreporter.config.option.collectonly:
            for text in doc.safety:
                terminalreporter.write_line(visible(text), yellow=True)
        elif doc is not None:
            terminalreporter.section("sparkfabric verdict", bold=True)
            for line in banner.terminal_lines(doc):
                terminalreporter.write_line(visible(line.text), **MARKUP.get(line.tone, {}))
        for lost in self.lost:
            terminalreporter.write_line(visible(lost), red=True)

    # pytest-html 4 (every hook optional: `-p no:html` works): sortable Node / Rail / Measured /
    # Expected columns; no Duration column (an item's time is not its measurement's: the first
    # item of a phase waits for the whole phase); a failure's cause and fix once, in a box above
    # its log; a skipped test's reason as text under its own name.
    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: Cells) -> None:
        _place(
            cells,
            [f'<th class="sortable" data-column-type="{k}"{s}>{t}</th>' for k, t, _, s in COLUMNS],
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: Cells) -> None:
        props = properties(report)
        # One line: pytest-html reads a sortable cell's value with a single-line pattern.
        text = {k: esc(" ".join(props.get(key, "").split())) for k, _, key, _ in COLUMNS}
        _place(cells, [f'<td class="col-{k}"{s}>{text[k]}</td>' for k, _, _, s in COLUMNS])
        if report.skipped and report.when == "setup":
            # A test skipped by a fixture is still that test, not its `::setup` phase.
            cells[1] = cells[1].replace(f"{report.nodeid}::setup</td>", f"{report.nodeid}</td>")

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: Cells) -> None:
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

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: Cells) -> None:
        if (doc := self.results()) is not None:
            prefix.append(ENVIRONMENT_LAST + fragment(doc, self.baseline))


class Guard:
    """Innermost around every `pytest_sessionfinish`: a writer (pytest-html, JUnit XML) raising on
    a full disk costs one line, not the run's summary and verdict."""

    def __init__(self, outputs: Outputs) -> None:
        self.outputs = outputs

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        option = session.config.option
        try:
            yield
        except OSError as exc:
            # Name the file that was lost (a write that fails on a full disk names none), remove
            # what was half written, and give pytest-html its turn when JUnit XML failed first.
            writer = None  # which writer raised, by its traceback
            for frame, _ in traceback.walk_tb(exc.__traceback__):
                name = frame.f_globals.get("__name__", "")
                writer = "pytest_html" if name.startswith("pytest_html") else writer
                writer = "junitxml" if name.endswith("junitxml") else writer
            path = getattr(option, "htmlpath" if writer == "pytest_html" else "xmlpath", None)
            self.outputs.lose(str(path or exc.filename or "a report"), exc)
            if path and not exc.filename:
                with contextlib.suppress(OSError):
                    Path(path).unlink()
            if writer == "junitxml" and getattr(option, "htmlpath", None):
                for plugin in session.config.pluginmanager.get_plugins():
                    finish = getattr(plugin, "pytest_sessionfinish", None)
                    if finish is not None and type(plugin).__module__.startswith("pytest_html."):
                        try:
                            finish(session)
                        except OSError as again:
                            self.outputs.lose(str(option.htmlpath), again)
        # The HTML report and JUnit XML name hosts, users and addresses, as the JSON does.
        for path in filter(None, (getattr(option, o, None) for o in ("htmlpath", "xmlpath"))):
            with contextlib.suppress(OSError):
                Path(path).chmod(0o600)


def register(config: pytest.Config, results: ResultsOf, baseline: Baseline | None = None) -> None:
    """Register the report plugins (idempotent); the JSON results go to --sparkfabric-json."""
    if config.pluginmanager.get_plugin("sparkfabric-outputs") is not None:
        return
    out = config.getoption("sparkfabric_json", None)
    outputs = Outputs(results, Path(out) if out else None, baseline)
    config.pluginmanager.register(outputs, "sparkfabric-outputs")
    config.pluginmanager.register(Guard(outputs), "sparkfabric-guard")


def results_of(
    cluster: Cluster,
    *,
    items: Sequence[Item],
    causes: Sequence[Cause],
    fabric: Fabric | None,
    started: datetime,
    duration_s: float,
    interrupted: bool = False,
    safety: Sequence[str] = (),
) -> Results:
    """The run's results document, put together once at its end."""
    from pytest_sparkfabric.measure import figures, preflight

    measured = figures.measurements(fabric) if fabric is not None else []
    info = ClusterInfo(
        name=Path(cluster.source or "cluster.yaml").stem,
        path=str(cluster.source) if cluster.source else None,
        topology=cluster.topology,
        transport=cluster.spec.transport,
        nodes=tuple(NodeInfo(name=n.name, ports=tuple(n.ports)) for n in cluster.nodes),
        switch=str(cluster.spec.switch.host) if cluster.spec.switch else None,
    )
    return Results(
        verdict=verdict_of(Counts.of(i.outcome for i in items), interrupted=interrupted),
        interrupted=interrupted,
        cluster=info,
        started=started,
        duration_s=round(max(0.0, duration_s), 3),
        causes=tuple(causes),
        items=tuple(items),
        measurements=tuple(measured),
        cables=tuple(figures.cables(fabric, items, measured)) if fabric is not None else (),
        phases=tuple(figures.phases(fabric)) if fabric is not None else (),
        preflight=preflight.document(fabric) if fabric is not None else (),
        thresholds=figures.thresholds(fabric) if fabric is not None else {},
        safety=tuple(safety),
    )


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


def fragment(doc: Results, baseline: Baseline | None = None) -> str:
    """The sections in reading order (verdict, baseline, fabric, charts, cables, what the nodes
    have) in one <div> with their CSS: pytest-html's summary prefix."""
    from pytest_sparkfabric.report import build, charts, picture

    drawn = build.picture(doc)
    sections = [("verdict", "", banner.html(doc))]
    if baseline is not None:
        changes = diff_html(compare(baseline.doc, doc), baseline.name)
        sections.append(("baseline", f"Against the baseline {baseline.name}", changes))
    svg = picture.render(drawn)
    sections.append(("fabric", "The fabric as cabled", f'<div class="sf-picture">{svg}</div>'))
    if figures := "".join(
        f'<figure class="sf-chart" data-chart="{esc(c.key)}">{c.svg}<figcaption><b>'
        f"{esc(c.title)}.</b> {esc(c.caption)}</figcaption></figure>"
        for c in charts.render(doc)
    ):
        sections.append(("charts", "Measurements", f'<div class="sf-charts">{figures}</div>'))
    if doc.cables:
        table = build.cable_table(build.cable_rows(doc, drawn))
        sections.append(("cables", "Cables", f'<div class="sf-inventory-wrap">{table}</div>'))
    if doc.preflight:
        sections.append(("preflight", "What the nodes have", _preflight(doc.preflight)))
    parts = [f'<div class="sf-report"><style>{CSS}</style>']
    for key, title, body in sections:
        heading = f"<h2>{esc(title)}</h2>" if title else ""
        parts.append(f'<section class="sf-section" id="sf-{key}">{heading}{body}</section>')
    return "".join(parts) + "</div>"


def page(doc: Results, *, baseline: Baseline | None = None) -> str:
    """A whole HTML document (`sparkfabric report html`)."""
    title = f"sparkfabric: {doc.cluster.name} {doc.verdict.upper()}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title></head><body>{fragment(doc, baseline)}</body></html>\n"
    )
