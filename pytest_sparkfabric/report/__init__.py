"""Reports an operator can hand over: the JSON results, the HTML report, JUnit, the terminal, each
drawn from the one results document the session builds at the run's end. A report that cannot
be written costs only itself: the others are still written, the verdict still printed, and one
line names the file that was lost."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.private_files import write_private
from pytest_sparkfabric.report import banner
from pytest_sparkfabric.report.diff import Baseline
from pytest_sparkfabric.report.html import HtmlReport
from pytest_sparkfabric.results import (
    Cause,
    ClusterInfo,
    Counts,
    Item,
    NodeInfo,
    Results,
    verdict_of,
)
from pytest_sparkfabric.shell import visible

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric

__all__ = ["register", "results_of"]

ResultsOf = Callable[[], "Results | None"]
MARKUP = {"good": {"green": True, "bold": True}, "bad": {"red": True}, "warn": {"yellow": True}}


class Outputs:
    """A pytest plugin: the JSON results file, and the verdict as the terminal's last lines
    (with one line per report file that could not be written)."""

    def __init__(self, results: ResultsOf, json_path: Path | None) -> None:
        self.results = results
        self.json_path = json_path
        self.lost: list[str] = []

    def lose(self, what: str, exc: OSError) -> None:
        line = f"sparkfabric: could not write {what}: {exc.strerror or exc}"
        if line not in self.lost:
            self.lost.append(line)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        doc = self.results()
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


class Guard:
    """Innermost around every `pytest_sessionfinish`: pytest-html's and pytest's JUnit writer
    raise on a full disk; the error becomes one line instead of ending the run before its
    summary (and the verdict) is printed."""

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
    """Register the report plugins (idempotent; works with `-p no:html`: every pytest-html
    hook is optional). The JSON results go where --sparkfabric-json says, if it is given."""
    if config.pluginmanager.get_plugin("sparkfabric-outputs") is not None:
        return
    out = config.getoption("sparkfabric_json", None)
    outputs = Outputs(results, Path(out) if out else None)
    config.pluginmanager.register(outputs, "sparkfabric-outputs")
    config.pluginmanager.register(Guard(outputs), "sparkfabric-guard")
    config.pluginmanager.register(HtmlReport(results, baseline), "sparkfabric-html")


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
    """The run's results document, put together once at its end: its items, root causes and
    what its fabric measured."""
    from pytest_sparkfabric.measure import figures, preflight

    measured = figures.measurements(fabric) if fabric is not None else []
    name = Path(cluster.source).name if cluster.source else "cluster.yaml"
    info = ClusterInfo(
        name=Path(name).stem,
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
