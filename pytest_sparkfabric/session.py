"""One run (in `config.stash`, `get_session`): the cluster, a lazily opened transport and fabric,
and each item's outcome and findings, recorded once by the report hook as it ends; the root
causes are grouped once (`conclude`, by the verdict item or at a cut-short session's end)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Generator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.outcome import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric import objects
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.cluster.plan import Plan
    from pytest_sparkfabric.diagnosis.causes import Failure, RootCauses
    from pytest_sparkfabric.diagnosis.evidence import Finding
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.report.diff import Baseline
    from pytest_sparkfabric.results import Item, Outcome, Results
    from pytest_sparkfabric.transport import Transport

VERDICT_ID = "sparkfabric::verdict"
EXIT_INCOMPLETE = 10
"""Exit status of a run whose verdict is INCOMPLETE (ACCEPTED 0, REJECTED 1, usage error 4); apart
from every code pytest uses (0-6), so CI can tell "the cluster is bad" from "we could not look"."""


class SparkSession:
    """Registered as a pytest plugin object when --cluster is given."""

    def __init__(
        self,
        config: pytest.Config,
        cluster: Cluster,
        *,
        suite: Path,
        record_dir: Path | None = None,
        baseline: Baseline | None = None,
    ) -> None:
        from pytest_sparkfabric.cluster.plan import plan
        from pytest_sparkfabric.report.banner import Terminal
        from pytest_sparkfabric.transport.rest import safety_warnings

        self.config = config
        self.cluster = cluster
        self.suite = suite
        self.plan: Plan = plan(cluster)
        self.safety: list[str] = safety_warnings(cluster)
        """How the run is less safe than by default: in the header and every report."""
        self.record_dir = record_dir
        self.baseline = baseline
        self.strict = bool(config.getoption("sparkfabric_strict", False))
        self._transport: Transport | None = None
        self._fabric: Fabric | None = None
        self._lock = threading.Lock()
        self.terminal = Terminal(config, progress_prefix(cluster.spec.transport))
        self.items: list[Item] = []
        self._failures: list[Failure] = []
        self._passed: list[Failure] = []
        self._seen: dict[str, Failure] = {}
        """An item's failure as this process found it, until its log report arrives."""
        self.started = datetime.now(UTC).astimezone()
        self._t0 = time.monotonic()
        self.results: Results | None = None
        self.suite_property: Callable[[str, str], None] | None = None
        """pytest's `record_testsuite_property` (JUnit XML), once the first item has set up."""
        self._old_sigterm: Any = None

    # -- the cluster ----------------------------------------------------------------------------

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
                    self.cluster,
                    transport,
                    progress=self.terminal.show,
                    status=lambda line: self.terminal.show(line, status=True),
                )
            return self._fabric

    @property
    def measured_fabric(self) -> Fabric | None:
        """The fabric if any test used it (None: nothing was measured); starts nothing."""
        with self._lock:
            return self._fabric

    def close(self) -> None:
        """End every command the session still runs on the nodes (the transport tracks them)."""
        with self._lock:
            transport = self._transport
            self._transport = None
        if transport is not None:
            transport.close()

    # -- what each item found ---------------------------------------------------------------------

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
        """The one place an item's outcome is decided and recorded (on the report, as plain
        attributes, so it reaches an xdist controller too)."""
        report = yield
        if item.nodeid == VERDICT_ID or report.skipped or (report.when != "call" and report.passed):
            return report
        from pytest_sparkfabric import objects
        from pytest_sparkfabric.diagnosis.causes import Failure
        from pytest_sparkfabric.shell import visible
        from pytest_sparkfabric.verdict import BLAMED, WARNINGS, item_path, widen

        exc = call.excinfo.value if call.excinfo is not None else None
        path = item_path(item)
        findings: tuple[Finding, ...] = ()
        warnings = item.stash.get(WARNINGS, []) if report.when == "call" else []
        outcome: Outcome = "failed" if report.failed else "warned" if warnings else "passed"
        if isinstance(exc, NotMeasured):
            found = self._unmeasured_finding(exc, path)
            outcome, findings = "not_measured", (found,)
            if found.rule.id in ("node_unreachable", "prerequisite_missing"):
                # Checks of other nodes that needed the lost one, or its missing tool (NCCL,
                # the soak's traffic), are about it too.
                widen(item, found.objects)
                path = item_path(item)
            fix = f"\nFix: {exc.fix}" if exc.fix else ""
            report.longrepr = visible(f"not measured: {exc.reason}{fix}")
        elif report.failed:
            findings = self._on_cables(item.stash.get(BLAMED, ()), path)
        elif self.baseline is not None and (
            why := self.baseline.regression(_item_record(item, report, outcome, path, [], ()))
        ):
            outcome, findings = "failed", (why[1],)
            report.outcome, report.longrepr = "failed", why[0]
        if outcome == "warned" and self.strict:
            outcome, report.outcome = "failed", "failed"
            report.longrepr = "\n".join(f"warning (strict): {w.message}" for w in warnings)
        record = _item_record(item, report, outcome, path, warnings, findings)
        report.sparkfabric_outcome = outcome  # type: ignore[attr-defined]
        report.sparkfabric_item = record.model_dump(mode="json")  # type: ignore[attr-defined]
        self._seen[item.nodeid] = Failure(item.nodeid, path, findings)
        report.sparkfabric_failure = {  # type: ignore[attr-defined]
            "path": list(objects.ids(path)),
            "findings": [_finding_json(f) for f in findings],
        }
        return report

    def _unmeasured_finding(self, exc: NotMeasured, path: tuple[objects.Obj, ...]) -> Finding:
        from pytest_sparkfabric import objects
        from pytest_sparkfabric.diagnosis.evidence import Finding
        from pytest_sparkfabric.diagnosis.rules import RULES

        nodes = exc.nodes or tuple(dict.fromkeys(n for o in path for n in o.nodes))
        fabric = self.measured_fabric
        if fabric is not None and exc.missing == "ssh":
            fabric.lose(exc)  # every later check on it: not measured at once, saying so
        down = {**(fabric.measured("shell", dict) or {}), **fabric.lost} if fabric else {}
        lost = [n for n, why in down.items() if why in exc.reason]
        if lost:
            # What could not run without a node that does not answer is that node's cause.
            nodes, exc.missing = tuple(lost), "ssh"
        blamed = tuple(map(objects.node, nodes)) or path
        if exc.missing == "ssh":
            gone = fabric.lost if fabric is not None else {}
            mid_run = nodes and all(n in gone for n in nodes)
            cause = "stopped answering ssh during the run" if mid_run else ""
            rule = RULES["node_unreachable"]
        elif exc.missing is not None:
            rule, cause = RULES["prerequisite_missing"], f"{exc.missing} missing"
        else:
            # One cause per node: what stopped each check there is its evidence.
            where = f" on {', '.join(nodes)}" if nodes else ""
            rule, cause = RULES["not_measured"], f"could not measure{where}"
        first = (exc.reason.strip().splitlines() or [exc.reason])[0]
        return Finding(rule, first, nodes, "", exc.fix or "", objects=blamed, cause=cause)

    def _on_cables(
        self, found: tuple[Finding, ...], path: tuple[objects.Obj, ...]
    ) -> tuple[Finding, ...]:
        """A fault seen on a rail or a link blames what its rule names (`causes.BLAMES`):
        the cable, the node or the switch leg, so its items share one root cause."""
        from dataclasses import replace

        from pytest_sparkfabric import objects
        from pytest_sparkfabric.diagnosis.causes import BLAMES

        out = []
        for f in found:
            on = f.objects or path
            what = BLAMES.get(f.rule.id)
            if what and on and all(o.kind in ("rail", "link", "direction", "pair") for o in on):
                f = replace(f, objects=objects.blamed_as(what, self.plan, f.nodes, on) or on)
            out.append(f)
        return tuple(out)

    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        outcome = getattr(report, "sparkfabric_outcome", None)
        if outcome == "not_measured":
            return "not measured", "N", ("NOT MEASURED", {"yellow": True})
        if outcome == "warned":
            return "warned", "W", ("WARNED", {"yellow": True})
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.terminal.close()
        record = getattr(report, "sparkfabric_item", None)
        if record is None:
            return
        # Here rather than in the report hook: an xdist controller sees only log reports, so
        # what a worker found arrives as plain data and is read back into findings.
        from pytest_sparkfabric.results import Item

        item = Item.model_validate(record)
        self.items.append(item)
        failure = self._seen.pop(report.nodeid, None) or _failure_of(
            report.nodeid, getattr(report, "sparkfabric_failure", {})
        )
        (self._failures if item.outcome in ("failed", "not_measured") else self._passed).append(
            failure
        )

    # -- the verdict ----------------------------------------------------------------------------

    def root_causes(self) -> RootCauses:
        """The run's root causes so far (the one grouping of its failures)."""
        from functools import partial

        from pytest_sparkfabric.diagnosis.causes import group
        from pytest_sparkfabric.measure.localize import suspects

        cables = None
        if self.cluster.topology != "switch":
            cables = [(c.a_node, c.b_node) for c in self.plan.cables if c.b_node is not None]
        return group(self._failures, self._passed, partial(suspects, cables=cables))

    def conclude(self, *, interrupted: bool = False) -> Results:
        """The run's results document, built once: root causes grouped, figures read."""
        if self.results is not None and not interrupted:
            return self.results
        from pytest_sparkfabric.report import results_of

        self.results = results_of(
            self.cluster,
            items=self.items,
            causes=self.root_causes().causes,
            fabric=self.measured_fabric,
            started=self.started,
            duration_s=time.monotonic() - self._t0,
            interrupted=interrupted,
            safety=self.safety,
        )
        if self.suite_property is not None:
            self.suite_property("sparkfabric_verdict", self.results.verdict)
        return self.results

    # -- the session ----------------------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = datetime.now(UTC).astimezone()
        self._t0 = time.monotonic()
        if threading.current_thread() is threading.main_thread():
            # A CI cancel or a job timeout sends SIGTERM: end like ^C (remote work ended,
            # verdict INCOMPLETE, reports written with what was measured).
            self._old_sigterm = signal.signal(signal.SIGTERM, _interrupt)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        if self._old_sigterm is not None:
            # The reports take seconds and hold what was measured: a SIGTERM now lets them finish.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.close()
        if hasattr(session.config, "workerinput"):
            return
        results = self.conclude(interrupted=interrupted)
        ran = not session.config.option.collectonly
        if ran and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = {"accepted": 0, "rejected": 1}.get(
                results.verdict, EXIT_INCOMPLETE
            )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.close()
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _finding_json(f: Finding) -> dict[str, Any]:
    from pytest_sparkfabric import objects

    return {
        **{k: getattr(f, k) for k in ("where", "evidence", "fix", "certain", "cause")},
        "rule": f.rule.id,
        "nodes": list(f.nodes),
        "objects": list(objects.ids(f.objects)),
    }


def _failure_of(nodeid: str, data: dict[str, Any]) -> Failure:
    from pytest_sparkfabric import objects
    from pytest_sparkfabric.diagnosis.causes import Failure
    from pytest_sparkfabric.diagnosis.evidence import Finding
    from pytest_sparkfabric.diagnosis.rules import RULES

    def objs(ids: list[str]) -> tuple[objects.Obj, ...]:
        return tuple(o for o in map(objects.parse, ids) if o is not None)

    findings = tuple(
        Finding(
            **{
                **f,
                "rule": RULES[f["rule"]],
                "nodes": tuple(f["nodes"]),
                "objects": objs(f["objects"]),
            }
        )
        for f in data.get("findings", [])
    )
    return Failure(nodeid, objs(data.get("path", [])), findings)


def _item_record(
    item: pytest.Item,
    report: pytest.TestReport,
    outcome: Outcome,
    path: tuple[objects.Obj, ...],
    warnings: list[Any],
    findings: tuple[Finding, ...],
) -> Item:
    from pytest_sparkfabric import objects
    from pytest_sparkfabric.results import Item, WarningNote
    from pytest_sparkfabric.shell import visible

    props: dict[str, str] = {}
    for key, value in report.user_properties:
        props.setdefault(str(key), str(value))
    measured, unit = _figure(props)
    rule = findings[0].rule.id if findings else props.get("rule")
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
        rule=rule,
        message=visible(message) if message else None,
        duration_s=round(report.duration, 3),
        properties=props,
        warnings=tuple(
            WarningNote(message=w.message, rule=w.rule, objects=objects.ids(w.objects))
            for w in warnings
        ),
    )


def _figure(props: dict[str, str]) -> tuple[float | str | None, str | None]:
    """The item's figure: `measured_gbps=` / `measured_gbytes_s=` as numbers with their unit,
    else the `measured` text."""
    for key, unit in (("measured_gbps", "Gb/s"), ("measured_gbytes_s", "GB/s")):
        if key in props:
            try:
                return float(props[key]), unit
            except ValueError:
                pass
    return props.get("measured"), None


SESSION_KEY = pytest.StashKey[SparkSession]()


def get_session(config: pytest.Config) -> SparkSession | None:
    """The run's session, or None where the plugin is inert (no --cluster)."""
    return config.stash.get(SESSION_KEY, None)


def progress_prefix(transport: str) -> str:
    """How progress lines start: they say when the times in them are modelled, not waited."""
    note = {"sim": " (simulated time)", "replay": " (replayed)"}.get(transport, "")
    return f"sparkfabric{note}"


def item_needs(item: pytest.Item) -> tuple[tuple[str, ...], bool]:
    """What an item runs on the nodes (its `sparkfabric_needs` markers; measure/preflight.py),
    and whether it runs that on every node (`on="cluster"`: the soak) rather than its own."""
    marks = list(item.iter_markers("sparkfabric_needs"))
    wide = any(m.kwargs.get("on") == "cluster" for m in marks)
    return tuple(a for m in marks for a in m.args), wide


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
