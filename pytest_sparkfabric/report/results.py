"""The JSON results document of a run (`--sparkfabric-json PATH`, schema: `report.schema`), and
everything the other reports draw from it: the HTML report's verdict, picture, charts and cable
inventory, and the terminal's last lines.

The document is built once, when the session finishes and before pytest-html writes its page:
the items as they ended, the root causes, and what the engine measured (read from its cache).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.report import items as item_rows
from pytest_sparkfabric.report.data import ReportData

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.report.baseline import Baseline

Doc = dict[str, Any]
FabricOf = Callable[[], "Fabric | None"]


def document(
    data: ReportData,
    items: list[Doc],
    *,
    started: datetime,
    duration_s: float,
    fabric: Fabric | None = None,
    causes: list[Doc] | None = None,
) -> Doc:
    """The results document (schema version 1) of a run's items and what its fabric measured."""
    from pytest_sparkfabric.report import harvest
    from pytest_sparkfabric.report.causes import session_causes
    from pytest_sparkfabric.report.model import Counts, verdict_of
    from pytest_sparkfabric.report.schema import VERSION

    figures = harvest.measurements(fabric, items) if fabric is not None else []
    return {
        "version": VERSION,
        "verdict": verdict_of(Counts.of(i["outcome"] for i in items)),
        "cluster": data.cluster_doc(),
        "started": started.isoformat(timespec="seconds"),
        "duration_s": round(max(0.0, duration_s), 3),
        "causes": session_causes(fabric, items) if causes is None else causes,
        "items": items,
        "measurements": figures,
        "cables": harvest.cables(fabric, items, figures) if fabric is not None else [],
        "phases": harvest.phases(fabric) if fabric is not None else [],
        "thresholds": dict(harvest.thresholds(fabric)) if fabric is not None else {},
        "warnings": list(data.warnings),
    }


class ResultsFile:
    """A pytest plugin: every item's row as it ends, the document at the session's end (before
    pytest-html writes its page), written where --sparkfabric-json says (private: 0600), on the
    xdist controller or a plain run, never on a worker."""

    def __init__(
        self,
        data: ReportData,
        path: Path | None,
        *,
        suite: Path | None = None,
        fabric: FabricOf = lambda: None,
        baseline: Baseline | None = None,
    ) -> None:
        self.data = data
        self.path = path
        self.suite = suite
        self.fabric = fabric
        self.baseline = baseline
        self.items: list[Doc] = []
        self.ids: dict[str, str] = {}
        """pytest node id -> the stable id."""
        self.doc: Doc | None = None
        self.started = datetime.now(UTC).astimezone()
        self._t0 = time.monotonic()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = datetime.now(UTC).astimezone()
        self._t0 = time.monotonic()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        suite = self.suite
        stable = (
            item_rows.stable_id(item.nodeid, item.path, suite) if suite is not None else item.nodeid
        )
        # Plain attributes travel with the report to the xdist controller.
        report.sparkfabric_id = stable  # type: ignore[attr-defined]
        report.sparkfabric_objects = item_rows.objects_of(item)  # type: ignore[attr-defined]
        if self.baseline is not None and report.when == "call" and report.passed:
            self.baseline.judge(report, stable)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Log reports reach the xdist controller too (with their user_properties), so the
        # results are complete whether the tests ran here or on a worker.
        stable = getattr(report, "sparkfabric_id", report.nodeid)
        self.ids[report.nodeid] = stable
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            objects = list(getattr(report, "sparkfabric_objects", ()))
            self.items.append(item_rows.row(report, stable, objects))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return
        from pytest_sparkfabric.report.causes import document_causes

        self.doc = document(
            self.data,
            self.items,
            started=self.started,
            duration_s=time.monotonic() - self._t0,
            fabric=self.fabric(),
            causes=document_causes(self.data.causes().as_json(), self.ids, self.items),
        )
        if self.path is None:
            return
        from pytest_sparkfabric.private_files import write_private

        text = json.dumps(self.doc, indent=2, sort_keys=True, default=str)
        write_private(self.path, text)
