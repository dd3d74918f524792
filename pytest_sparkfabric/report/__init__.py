"""Reports an operator can hand over: the results document, the HTML report, JUnit, the terminal.

Every test records node / rail / measured / expected (and on failure cause / fix / rule) in
`item.user_properties` through `verdict`; JUnit XML writes those as <property> elements by itself.
At the session's end `report.results` builds the results document (verdict, root causes, items,
what the engine measured); the HTML report draws its verdict, picture, charts and cables from it,
the terminal ends with its verdict. Each report is a plugin object built with the run's
`ReportData` and, for what was measured, a getter of the fabric: no report reaches for the session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sparkfabric.report.baseline import Baseline
from pytest_sparkfabric.report.data import ReportData
from pytest_sparkfabric.report.html import HtmlReport
from pytest_sparkfabric.report.junit import JunitReport
from pytest_sparkfabric.report.results import FabricOf, ResultsFile
from pytest_sparkfabric.report.terminal import TerminalVerdict

__all__ = ["ReportData", "register"]


def register(
    config: pytest.Config,
    data: ReportData,
    *,
    suite: Path | None = None,
    fabric: FabricOf = lambda: None,
) -> None:
    """Register the report plugins (idempotent; works with `-p no:html`: every pytest-html
    hook is optional). The JSON results go where --sparkfabric-json says, if it is given;
    items of the shipped `suite` get ids relative to it; `fabric` gives what was measured."""
    if config.pluginmanager.get_plugin("sparkfabric-results") is not None:
        return
    out = config.getoption("sparkfabric_json", None)
    base = config.getoption("sparkfabric_baseline", None)
    baseline = Baseline.load(str(base)) if base else None
    results = ResultsFile(
        data, Path(out) if out else None, suite=suite, fabric=fabric, baseline=baseline
    )
    plugins = (
        ("sparkfabric-results", results),
        ("sparkfabric-html", HtmlReport(data, results)),
        ("sparkfabric-junit", JunitReport(data, results)),
        ("sparkfabric-verdict", TerminalVerdict(results)),
    )
    for name, plugin in plugins:
        if config.pluginmanager.get_plugin(name) is None:
            config.pluginmanager.register(plugin, name)
