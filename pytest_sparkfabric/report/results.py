"""The JSON results document (`--sparkfabric-json PATH`): the cluster under test, the warnings,
the root causes (`causes`, in the shape of report/schema.py), and per test its outcome,
duration, recorded properties, message and skip reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric.report.data import ReportData


def row_of(report: pytest.TestReport) -> dict[str, Any]:
    """One test's entry: what `verdict` recorded (user_properties) and how it ended."""
    return {
        "nodeid": report.nodeid,
        "outcome": report.outcome,
        "duration_s": round(report.duration, 3),
        "properties": {k: v for k, v in report.user_properties},
        "message": report.longreprtext if report.failed else None,
        "skip_reason": _skip_reason(report),
    }


def document(data: ReportData, tests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cluster": data.cluster_file,
        "topology": data.topology,
        "nodes": list(data.nodes),
        "transport": data.transport,
        "warnings": list(data.warnings),
        "causes": data.causes().as_json(),
        "tests": tests,
    }


def _skip_reason(report: pytest.TestReport) -> str | None:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    return None


class ResultsFile:
    """A pytest plugin: collects every test's row, writes the document at the session's end
    (private: 0600), on the xdist controller or a plain run, never on a worker."""

    def __init__(self, data: ReportData, path: Path | None) -> None:
        self.data = data
        self.path = path
        self.tests: list[dict[str, Any]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Log reports reach the xdist controller too (with their user_properties), so the
        # results file is complete whether the tests ran here or on a worker.
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.tests.append(row_of(report))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.path is None or hasattr(session.config, "workerinput"):
            return
        from pytest_sparkfabric.private_files import write_private

        text = json.dumps(document(self.data, self.tests), indent=2, sort_keys=True, default=str)
        write_private(self.path, text)
