"""The plugin's per-run state: the cluster, a lazily opened transport, the fabric, progress lines,
and the items of a node that does not answer failing at once. Kept in `config.stash` under
SESSION_KEY; fixtures and hooks find it with `get_session`."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.result import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.cluster.plan import Plan
    from pytest_sparkfabric.diagnosis.causes import Failure, RootCauses
    from pytest_sparkfabric.diagnosis.evidence import Finding
    from pytest_sparkfabric.diagnosis.objects import Obj
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.report.progress import Status
    from pytest_sparkfabric.transport import Transport


class SparkSession:
    """Registered as a pytest plugin object when --cluster is given."""

    def __init__(self, config: pytest.Config, cluster: Cluster, *, record_dir: Path | None) -> None:
        from pytest_sparkfabric.cluster.plan import plan
        from pytest_sparkfabric.transport.switch import safety_warnings

        self.config = config
        self.cluster = cluster
        self.plan: Plan = plan(cluster)
        # Shown in the terminal header, the HTML report and the JSON results.
        self.warnings: list[str] = safety_warnings(cluster)
        self.record_dir = record_dir
        self._transport: Transport | None = None
        self._fabric: Fabric | None = None
        self._lock = threading.Lock()
        self._pad: tuple[Path, int] | None = None
        self._failures: list[Failure] = []
        self._passed: list[Failure] = []
        self._status: Status | None = None

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
                from pytest_sparkfabric.measure.engine import Fabric

                self._fabric = Fabric(
                    self.cluster, transport, progress=self._progress, status=self._detail
                )
            return self._fabric

    @property
    def measured_fabric(self) -> Fabric | None:
        """The fabric if any test used it (None: nothing was measured); starts nothing."""
        with self._lock:
            return self._fabric

    def _progress(self, line: str) -> None:
        self._terminal(line, status=False)

    def _detail(self, line: str) -> None:
        """A round or reading of a long phase: the status line (see report.progress)."""
        self._terminal(line, status=True)

    def _terminal(self, line: str, *, status: bool) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.get_verbosity() < 0:
            return
        text = f"{progress_prefix(self.cluster.spec.transport)}: {line}"
        # Progress is written while a test runs: step around output capture to reach the terminal.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if capture is not None:
            with capture.global_and_fixture_disabled():
                self._write_progress(reporter, text, status)
        else:
            self._write_progress(reporter, text, status)

    def _write_progress(self, reporter: Any, text: str, status: bool) -> None:
        from pytest_sparkfabric.report.progress import Status

        tw = self.config.get_terminal_writer()
        if self._status is None:
            self._status = Status(tty=_isatty(tw), width=tw.fullwidth)
        now = time.monotonic()
        if not status:
            self._close_status(tw)
            self._write_between_results(reporter, text)
            self._status.phase(now)
            return
        was_open = self._status.open
        shown = self._status.show(text, now)
        if shown is None:
            return
        if not self._status.tty:
            self._write_between_results(reporter, shown)
            return
        if not was_open and tw.width_of_current_line:
            tw.line()
        tw.write(shown, flush=True)
        fspath = reporter.currentfspath
        if isinstance(fspath, Path):
            self._pad = (fspath, len(os.path.relpath(fspath, reporter.startpath)) + 1)

    def _close_status(self, tw: Any) -> None:
        erase = self._status.close() if self._status is not None else None
        if erase is not None:
            tw.write(erase, flush=True)
            # The erased line is empty again: what pytest writes next starts at its left edge.
            if hasattr(tw, "_current_line"):
                tw._current_line = ""

    def _write_between_results(self, reporter: Any, text: str) -> None:
        """A line between the result letters of a file, without pytest naming the file again.

        pytest writes `path/test_x.py ..` and names the file anew after any other line; here
        the file keeps its one line, and its letters go on under where they were, on the line
        after the progress lines (verbose output, one line per test, is left as pytest has it).
        """
        fspath = reporter.currentfspath
        tw = self.config.get_terminal_writer()
        if not isinstance(fspath, Path):
            reporter.write_line(text)
            return
        if tw.width_of_current_line:
            tw.line()
        tw.line(text)
        reporter.currentfspath = fspath
        self._pad = (fspath, len(os.path.relpath(fspath, reporter.startpath)) + 1)

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
        down = self._unreachable_for(item)
        if down:
            # The node was found unreachable once; its items fail at once with that line.
            self._blame_unreachable(item, down)
            pytest.fail(f"not measured: {down}", pytrace=False)
        try:
            return (yield)
        except NotMeasured as err:
            reason = str(err)
            self._blame_unreachable(item, reason, in_reason=True)
        # Outside the except block, so the report shows one line, not a chained traceback.
        pytest.fail(f"not measured: {reason}", pytrace=False)

    def _blame_unreachable(self, item: pytest.Item, line: str, *, in_reason: bool = False) -> None:
        """Blame the nodes that do not answer: the item's own, or (`in_reason`) those whose
        reachability line a phase's reason quotes (NCCL, the soak need a partner too)."""
        from pytest_sparkfabric.diagnosis import objects
        from pytest_sparkfabric.diagnosis.evidence import Finding
        from pytest_sparkfabric.diagnosis.rules import RULES
        from pytest_sparkfabric.verdict import BLAMED, widen

        if in_reason and self._fabric is None:
            return
        unreachable = self.fabric.unreachable()
        if in_reason:
            down = [n for n, why in unreachable.items() if why in line]
        else:
            down = [n for n in item_nodes(item) if n in unreachable]
        if not down:
            return
        blamed = tuple(map(objects.node, down))
        if in_reason:
            widen(item, blamed)
        rule = RULES["node_unreachable"]
        item.stash[BLAMED] = (Finding(rule, line, tuple(down), "", objects=blamed),)

    def _unreachable_for(self, item: pytest.Item) -> str | None:
        """The reachability line of the nodes an item is parametrised with, if any is down.

        Items that read only the switch (they use the `switch` fixture) do not need a node's
        shell, so a node that cannot be logged into does not stop them."""
        nodes = item_nodes(item)
        if not nodes or "switch" in getattr(item, "fixturenames", ()):
            return None
        return self.fabric.down_line(nodes)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.when in ("setup", "call") and (report.failed or report.when == "call"):
            from pytest_sparkfabric.diagnosis.causes import Failure
            from pytest_sparkfabric.verdict import BLAMED, item_path

            blamed = item.stash.get(BLAMED, ()) if report.when == "call" else ()
            path = item_path(item)
            seen = Failure(report.nodeid, path, self._on_cables(blamed, path))
            if report.failed:
                self._failures.append(seen)
            elif report.passed:
                self._passed.append(seen)
        return report

    def _on_cables(self, found: tuple[Finding, ...], path: tuple[Obj, ...]) -> tuple[Finding, ...]:
        """A cable's fault seen on a rail (a marginal lane, no carrier) blames the cable."""
        from dataclasses import replace

        from pytest_sparkfabric.diagnosis import objects
        from pytest_sparkfabric.diagnosis.causes import CABLE_RULES

        out = []
        for f in found:
            blamed = f.objects or path
            if f.rule.id in CABLE_RULES and all(o.kind in ("rail", "link") for o in blamed):
                ends = {(s.node, s.port) for o in blamed for s in o.spots}
                cables = [
                    objects.cable_of(self.plan, n, p)
                    for n, p in ends
                    if n is not None and p is not None
                ]
                found_cables = tuple({c.id: c for c in cables if c is not None}.values())
                if found_cables:
                    f = replace(f, objects=found_cables)
            out.append(f)
        return tuple(out)

    def root_causes(self) -> RootCauses:
        """The run's root causes so far: each with the failed items it explains, and the
        failures no cause explains."""
        from functools import partial

        from pytest_sparkfabric.diagnosis.causes import group
        from pytest_sparkfabric.measure.suspects import suspects

        cables = None
        if self.cluster.topology != "switch":
            cables = [(c.a_node, c.b_node) for c in self.plan.cables if c.b_node is not None]
        return group(self._failures, self._passed, partial(suspects, cables=cables))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._close_status(self.config.get_terminal_writer())
        if self._pad is not None and (report.when == "call" or report.outcome != "passed"):
            # The result letter pytest is about to write lines up under the ones before it.
            fspath, width = self._pad
            self._pad = None
            if self.config.rootpath / report.nodeid.split("::")[0] == fspath:
                self.config.get_terminal_writer().write(" " * width)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        # Again at the end: the header is not shown under -q, and is far up in a long run.
        if self.warnings:
            terminalreporter.section("sparkfabric warnings", yellow=True)
            for warning in self.warnings:
                terminalreporter.write_line(warning, yellow=True)
        found = self.root_causes()
        if found.failed:
            terminalreporter.section("sparkfabric root causes", red=True)
            for n, line in enumerate(found.lines()):
                terminalreporter.write_line(line, red=n == 0 and bool(found.causes))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.close()


SESSION_KEY = pytest.StashKey[SparkSession]()


def get_session(config: pytest.Config) -> SparkSession | None:
    """The run's session, or None where the plugin is inert (no --cluster)."""
    return config.stash.get(SESSION_KEY, None)


def progress_prefix(transport: str) -> str:
    """How progress lines start: they say when the times in them are modelled, not waited."""
    note = {"sim": " (simulated time)", "replay": " (replayed)"}.get(transport, "")
    return f"sparkfabric{note}"


def item_nodes(item: pytest.Item) -> list[str]:
    """The nodes whose shell an item's fabric parameters need (node, rail, link, rail_link,
    node_pair): both ends of a rail link or node pair (a server and a client), the sending end
    of a directed link."""
    from pytest_sparkfabric.cluster import Node, Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink, Link, NodePair

    params = getattr(getattr(item, "callspec", None), "params", {})
    out: list[str] = []
    for value in params.values():
        if isinstance(value, Node):
            out.append(value.name)
        elif isinstance(value, Rail):
            out.append(value.node)
        elif isinstance(value, DirectedLink):
            # A ping runs on its sending node; the far end's kernel answers without a shell.
            out.append(value.src.node)
        elif isinstance(value, Link):
            out += [value.a.node, value.b.node]
        elif isinstance(value, NodePair):
            out += [value.a, value.b]
    return list(dict.fromkeys(out))


def _isatty(tw: Any) -> bool:
    """Whether the terminal writer writes to a terminal (a CI log is no TTY)."""
    out = getattr(tw, "_file", None)
    isatty = getattr(out, "isatty", None)
    return bool(isatty()) if callable(isatty) else False
