"""One run (in `config.stash`, `get_session`): the cluster, a lazily opened transport and fabric,
and each item's outcome and findings, recorded once by the report hook as it ends; the root
causes are grouped once (`conclude`, by the verdict item or at a cut-short session's end)."""

from __future__ import annotations

import base64
import contextlib
import pickle
import signal
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.outcome import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.diagnosis.causes import Failure
    from pytest_sparkfabric.diagnosis.evidence import Finding
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.objects import Obj
    from pytest_sparkfabric.results import Item, Outcome, Results, WarningNote
    from pytest_sparkfabric.transport import Transport
    from pytest_sparkfabric.transport.record import Recording

VERDICT_ID = "sparkfabric::verdict"
EXIT_INCOMPLETE = 10
"""Exit status of a run whose verdict is INCOMPLETE (ACCEPTED 0, REJECTED 1, usage error 4); apart
from every code pytest uses (0-6), so CI can tell "the cluster is bad" from "we could not look"."""
_STATUS = {"not_measured": ("not measured", "N"), "warned": ("warned", "W")}


class SparkSession:
    """Registered as a pytest plugin object when --cluster is given."""

    def __init__(
        self, config: pytest.Config, cluster: Cluster, *, recording: Recording | None = None
    ) -> None:
        from pytest_sparkfabric.cluster.plan import plan
        from pytest_sparkfabric.report.banner import Terminal
        from pytest_sparkfabric.report.diff import Baseline
        from pytest_sparkfabric.transport.rest import safety_warnings

        self.cluster = cluster
        record, old = (config.getoption(f"sparkfabric_{k}") for k in ("record", "baseline"))
        self.record_dir = Path(record) if record else None
        self.baseline = Baseline.load(str(old)) if old else None
        self.recording = recording  # the replayed recording, read and checked at configure
        self.plan = plan(cluster)
        self.safety: list[str] = safety_warnings(cluster)
        """How the run is less safe than by default: in the header and every report."""
        self.strict = bool(config.getoption("sparkfabric_strict", False))
        self._transport: Transport | None = None
        self._fabric: Fabric | None = None
        """The fabric if any test used it (None: nothing was measured)."""
        self._lock = threading.Lock()
        self.terminal = Terminal(config, cluster.spec.transport)
        self.items: list[Item] = []
        self._failures: list[Failure] = []
        self._passed: list[Failure] = []
        self.started, self._t0 = datetime.now(UTC).astimezone(), time.monotonic()
        self.results: Results | None = None
        self.suite_property: Callable[[str, str], None] | None = None
        """pytest's `record_testsuite_property` (JUnit XML), once the first item has set up."""
        self._old_sigterm: Any = None

    @property
    def transport(self) -> Transport:
        with self._lock:
            if self._transport is None:
                from pytest_sparkfabric.transport import make_transport

                try:
                    self._transport = make_transport(
                        self.cluster, record_dir=self.record_dir, recording=self.recording
                    )
                except FileNotFoundError as err:
                    raise pytest.UsageError(f"sparkfabric: {err}") from None
            return self._transport

    @property
    def fabric(self) -> Fabric:
        transport = self.transport
        with self._lock:
            if self._fabric is None:
                from pytest_sparkfabric.measure.engine import Fabric

                t = self.terminal
                self._fabric = Fabric(
                    self.cluster, transport, progress=t.show, status=t.status, plan=self.plan
                )
            return self._fabric

    def close(self) -> None:
        """End every command the session still runs on the nodes (the transport tracks them)."""
        with self._lock:
            transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        nodes = item_nodes(item)
        if nodes and "switch" not in getattr(item, "fixturenames", ()):
            # Items that read only the switch need no node's shell.
            unreachable = self.fabric.unreachable()
            down = [n for n in nodes if n in unreachable]
            if down:
                raise NotMeasured(
                    "; ".join(unreachable[n] for n in down), nodes=down, missing="ssh"
                )
        needs, wide = item_needs(item)
        if needs:
            # The preflight, first in the run: what every selected check needs, asked once.
            from pytest_sparkfabric.measure.preflight import preflight

            every = item.session.items
            checked = preflight(self.fabric, lambda: (n for i in every for n in item_needs(i)[0]))
            why = checked.blocking(needs, self.fabric.reachable() if wide or not nodes else nodes)
            if why is not None:
                raise why
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """The one place an item's outcome is decided and recorded (on the report, pickled, so
        it reaches an xdist controller too)."""
        report = yield
        if item.nodeid == VERDICT_ID or report.skipped or (report.when != "call" and report.passed):
            return report
        from pytest_sparkfabric.diagnosis.causes import Failure
        from pytest_sparkfabric.shell import visible
        from pytest_sparkfabric.verdict import BLAMED, WARNINGS, item_path, widen

        exc = call.excinfo.value if call.excinfo is not None else None
        path = item_path(item)
        findings: tuple[Finding, ...] = ()
        warnings = item.stash.get(WARNINGS, []) if report.when == "call" else []
        outcome: Outcome = "failed" if report.failed else "warned" if warnings else "passed"
        if isinstance(exc, NotMeasured):
            found = self._unmeasured(exc, path)
            outcome, findings = "not_measured", (found,)
            if found.rule.id in ("node_unreachable", "prerequisite_missing"):
                # Checks of other nodes that needed the lost one, or its missing tool (NCCL,
                # the soak's traffic), are about it too.
                widen(item, found.objects)
                path = item_path(item)
            fix = f"\nFix: {exc.fix}" if exc.fix else ""
            report.longrepr = visible(f"not measured: {exc.reason}{fix}")
        elif report.failed:
            findings = tuple(self._on_cables(f, path) for f in item.stash.get(BLAMED, ()))
        elif self.baseline is not None and (
            why := self.baseline.regression(_item_record(item, report, outcome, path, [], ()))
        ):
            outcome, findings = "failed", (why[1],)
            report.outcome, report.longrepr = "failed", why[0]
        if outcome == "warned" and self.strict:
            outcome, report.outcome = "failed", "failed"
            report.longrepr = "\n".join(f"warning (strict): {w.message}" for w in warnings)
        record = _item_record(item, report, outcome, path, warnings, findings)
        # A string on the report: an xdist worker sends it to the controller.
        blob = base64.b64encode(pickle.dumps((record, Failure(item.nodeid, path, findings))))
        report.sparkfabric = {"outcome": outcome, "found": blob.decode()}  # type: ignore[attr-defined]
        return report

    def _unmeasured(self, exc: NotMeasured, path: tuple[Obj, ...]) -> Finding:
        from pytest_sparkfabric import objects
        from pytest_sparkfabric.diagnosis.evidence import Finding
        from pytest_sparkfabric.diagnosis.rules import RULES

        nodes = exc.nodes or tuple(dict.fromkeys(n for o in path for n in o.nodes))
        fabric = self._fabric
        if fabric is not None and exc.missing == "ssh":
            fabric.lose(exc)  # every later check on it: not measured at once, saying so
        down = {**(fabric.measured("shell", dict) or {}), **fabric.lost} if fabric else {}
        lost = [n for n, why in down.items() if why in exc.reason]
        if lost:
            # What could not run without a node that does not answer is that node's cause.
            nodes, exc.missing = tuple(lost), "ssh"
        cause = ""
        if exc.missing == "ssh":
            rule: RuleId = "node_unreachable"
            if nodes and fabric is not None and all(n in fabric.lost for n in nodes):
                cause = "stopped answering ssh during the run"
        elif exc.missing is not None:
            rule, cause = "prerequisite_missing", f"{exc.missing} missing"
        else:
            # One cause per node: what stopped each check there is its evidence.
            where = f" on {', '.join(nodes)}" if nodes else ""
            rule, cause = "not_measured", f"could not measure{where}"
        first = (exc.reason.strip().splitlines() or [exc.reason])[0]
        blamed = tuple(map(objects.node, nodes)) or path
        return Finding(RULES[rule], first, nodes, "", exc.fix or "", objects=blamed, cause=cause)

    def _on_cables(self, f: Finding, path: tuple[Obj, ...]) -> Finding:
        """A fault seen on a rail or a link blames what its rule names (`causes.BLAMES`):
        the cable, the node or the switch leg, so its items share one root cause."""
        from pytest_sparkfabric import objects
        from pytest_sparkfabric.diagnosis.causes import BLAMES

        on = f.objects or path
        what = BLAMES.get(f.rule.id)
        if what and on and all(o.kind in ("rail", "link", "direction", "pair") for o in on):
            return replace(f, objects=objects.blamed_as(what, self.plan, f.nodes, on) or on)
        return f

    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        word, letter = _STATUS.get(str(getattr(report, "sparkfabric", {}).get("outcome")), ("", ""))
        return (word, letter, (word.upper(), {"yellow": True})) if word else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.terminal.close()
        data = getattr(report, "sparkfabric", None)
        if data is None:
            return
        # Here rather than in the report hook: an xdist controller sees only log reports.
        item, failure = pickle.loads(base64.b64decode(data["found"]))
        self.items.append(item)
        failed = item.outcome in ("failed", "not_measured")
        (self._failures if failed else self._passed).append(failure)

    def conclude(self, *, interrupted: bool = False) -> Results:
        """The run's results document, built once: root causes grouped, figures read."""
        if self.results is not None and not interrupted:
            return self.results
        from pytest_sparkfabric.diagnosis.causes import group
        from pytest_sparkfabric.measure.localize import suspects
        from pytest_sparkfabric.report import results_of

        cables = None
        if self.cluster.topology != "switch":
            cables = [(c.a_node, c.b_node) for c in self.plan.cables if c.b_node is not None]
        causes = group(self._failures, self._passed, partial(suspects, cables=cables))
        self.results = results_of(
            self.cluster,
            items=self.items,
            causes=causes,
            fabric=self._fabric,
            started=self.started,
            duration_s=time.monotonic() - self._t0,
            interrupted=interrupted,
            safety=self.safety,
        )
        if self.suite_property is not None:
            self.suite_property("sparkfabric_verdict", self.results.verdict)
        return self.results

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if threading.current_thread() is threading.main_thread():
            # A CI cancel or a job timeout sends SIGTERM: end like ^C (remote work ended,
            # verdict INCOMPLETE, reports written with what was measured).
            self._old_sigterm = signal.signal(signal.SIGTERM, _interrupt)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._old_sigterm is not None:
            # The reports take seconds and hold what was measured: a SIGTERM now lets them finish.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.close()
        if hasattr(session.config, "workerinput"):
            return
        results = self.conclude(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
        ran = not session.config.option.collectonly
        if ran and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            codes = {"accepted": 0, "rejected": 1}
            session.exitstatus = codes.get(results.verdict, EXIT_INCOMPLETE)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.close()
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _item_record(
    item: pytest.Item,
    report: pytest.TestReport,
    outcome: Outcome,
    path: tuple[Obj, ...],
    warnings: list[WarningNote],
    findings: tuple[Finding, ...],
) -> Item:
    from pytest_sparkfabric import objects
    from pytest_sparkfabric.results import Item
    from pytest_sparkfabric.shell import visible

    props: dict[str, str] = {}
    for key, value in report.user_properties:
        props.setdefault(str(key), str(value))
    measured, unit = _figure(props)
    message = report.longreprtext if report.failed else None
    return Item(
        id=item.nodeid,
        outcome=outcome,
        node=props.get("node") or (props["nodes"].split(",")[0] if "nodes" in props else None),
        rail=props.get("rail"),
        measured=measured,
        expected=props.get("expected"),
        unit=unit,
        objects=objects.ids(path),
        rule=findings[0].rule.id if findings else props.get("rule"),
        message=visible(message) if message else None,
        duration_s=round(report.duration, 3),
        properties=props,
        warnings=tuple(warnings),
    )


def _figure(props: dict[str, str]) -> tuple[float | str | None, str | None]:
    """The item's figure: `measured_gbps=` / `measured_gbytes_s=` as numbers with their unit,
    else the `measured` text."""
    for key, unit in (("measured_gbps", "Gb/s"), ("measured_gbytes_s", "GB/s")):
        with contextlib.suppress(KeyError, ValueError):
            return float(props[key]), unit
    return props.get("measured"), None


SESSION_KEY = pytest.StashKey[SparkSession]()


def get_session(config: pytest.Config) -> SparkSession | None:
    """The run's session, or None where the plugin is inert (no --cluster)."""
    return config.stash.get(SESSION_KEY, None)


def item_needs(item: pytest.Item) -> tuple[tuple[str, ...], bool]:
    """What an item runs on the nodes (its `sparkfabric_needs` markers; measure/preflight.py),
    and whether it runs that on every node (`on="cluster"`: the soak) rather than its own."""
    marks = list(item.iter_markers("sparkfabric_needs"))
    wide = any(m.kwargs.get("on") == "cluster" for m in marks)
    return tuple(a for m in marks for a in m.args), wide


def item_nodes(item: pytest.Item) -> list[str]:
    """The nodes whose shell an item's fabric parameters need: a node's, a rail's, both ends of
    a rail link or node pair (a server and a client), the sending end of a directed link."""
    from pytest_sparkfabric import objects
    from pytest_sparkfabric.cluster.plan import DirectedLink, NodePair

    out: list[str] = []
    for value in getattr(getattr(item, "callspec", None), "params", {}).values():
        if isinstance(value, DirectedLink):
            # A ping runs on its sending node; the far end's kernel answers without a shell.
            out.append(value.src.node)
        elif isinstance(value, NodePair):
            out += [value.a, value.b]
        else:
            out += [n for o in objects.path(value) for n in o.nodes]
    return list(dict.fromkeys(out))


class VerdictItem(pytest.Item):
    """`sparkfabric::verdict`, run last: the run's verdict as a check of its own, so JUnit XML,
    the HTML table and the terminal's FAILED list carry it with its root causes."""

    def runtest(self) -> None:
        session = get_session(self.config)
        assert session is not None
        results = session.conclude()
        if results.verdict != "accepted":
            from pytest_sparkfabric.report.banner import verdict_text
            from pytest_sparkfabric.shell import visible

            raise VerdictNotAccepted(visible(verdict_text(results)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, VerdictNotAccepted):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, VERDICT_ID


class VerdictNotAccepted(Exception):
    """The verdict is REJECTED or INCOMPLETE; the message lists the causes and warnings."""
