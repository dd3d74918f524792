"""The plugin's per-run state: the cluster, a lazily opened transport, the fabric, the results."""

from __future__ import annotations

import json
import threading
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.measured import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric.config import Cluster
    from pytest_sparkfabric.fabric import Fabric
    from pytest_sparkfabric.topology import Plan
    from pytest_sparkfabric.transport import Transport


class SparkSession:
    """Registered as a pytest plugin object when --cluster is given."""

    def __init__(self, config: pytest.Config, cluster: Cluster, *, record_dir: Path | None) -> None:
        from pytest_sparkfabric.switch.client import safety_warnings
        from pytest_sparkfabric.topology import plan

        self.config = config
        self.cluster = cluster
        self.plan: Plan = plan(cluster)
        # Shown in the terminal header, the HTML report and the JSON results.
        self.warnings: list[str] = safety_warnings(cluster)
        self.record_dir = record_dir
        self._transport: Transport | None = None
        self._fabric: Fabric | None = None
        self._lock = threading.Lock()
        self.results: list[dict[str, Any]] = []

    @property
    def transport(self) -> Transport:
        with self._lock:
            if self._transport is None:
                from pytest_sparkfabric.transport import make_transport

                try:
                    self._transport = make_transport(self.cluster, record_dir=self.record_dir)
                except FileNotFoundError as err:
                    raise pytest.UsageError(f"sparkfabric: {err}") from None
            return self._transport

    @property
    def fabric(self) -> Fabric:
        transport = self.transport
        with self._lock:
            if self._fabric is None:
                from pytest_sparkfabric.fabric import Fabric

                self._fabric = Fabric(self.cluster, transport, progress=self._progress)
            return self._fabric

    def _progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.get_verbosity() < 0:
            return
        # Progress is written while a test runs: step around output capture to reach the terminal.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(f"sparkfabric: {line}")
        else:
            reporter.write_line(f"sparkfabric: {line}")

    def close(self) -> None:
        """End every command the session still runs on the nodes (the transport tracks them)."""
        with self._lock:
            transport = self._transport
            self._fabric = self._transport = None
        if transport is not None:
            transport.close()

    # -- hooks ----------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        except NotMeasured as err:
            reason = str(err)
        # Outside the except block, so the report shows one line, not a chained traceback.
        pytest.fail(f"not measured: {reason}", pytrace=False)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Log reports reach the xdist controller too (with their user_properties), so the
        # results file is complete whether the tests ran here or on a worker.
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.results.append(
                {
                    "nodeid": report.nodeid,
                    "outcome": report.outcome,
                    "duration_s": round(report.duration, 3),
                    "properties": {k: v for k, v in report.user_properties},
                    "message": report.longreprtext if report.failed else None,
                    "skip_reason": _skip_reason(report),
                }
            )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        # Again at the end: the header is not shown under -q, and is far up in a long run.
        if self.warnings:
            terminalreporter.section("sparkfabric warnings", yellow=True)
            for warning in self.warnings:
                terminalreporter.write_line(warning, yellow=True)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.close()
        out = self.config.getoption("sparkfabric_json")
        if out and not hasattr(self.config, "workerinput"):
            from pytest_sparkfabric.private_files import write_private

            text = json.dumps(self.summary(), indent=2, sort_keys=True, default=str)
            write_private(Path(out), text)

    def summary(self) -> dict[str, Any]:
        c = self.cluster
        return {
            "cluster": str(c.source) if c.source else None,
            "topology": c.topology,
            "nodes": [n.name for n in c.nodes],
            "transport": c.spec.transport,
            "warnings": self.warnings,
            "tests": self.results,
        }


def _skip_reason(report: pytest.TestReport) -> str | None:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    return None
