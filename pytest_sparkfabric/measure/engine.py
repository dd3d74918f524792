"""The session's measurement engine: the cache of phase results and the job runner. A phase runs
once per session, the first time an item needs it, and each item asserts on its own part of it;
each phase module has one shape: `NAME`, a frozen result, `measure(fabric)`, accessors."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pytest_sparkfabric.measure.prereq import SSH_FIX, could_not_run
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.transport import Job, RunResult, Transport
from pytest_sparkfabric.transport.base import not_run

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Rail
    from pytest_sparkfabric.cluster.plan import Plan
    from pytest_sparkfabric.cluster.thresholds import Threshold, ThresholdName

T = TypeVar("T")
R = TypeVar("R")
QUICK_S = 20.0
REACH_COMMAND = "true"
"""The first command of a session on every node: it only proves the node's shell answers."""
Progress = Callable[[str], None]
Status = Callable[[str, float | None], None]
"""A status line and the share of its phase done (None: it does not say), for the ETA."""

PhaseName = Literal[
    "shell",
    "preflight",
    "facts",
    "links",
    "pings",
    "small_pings",
    "nccl_env",
    "switch",
    "switch_counters",
    "rail_counters",
    "nic_baseline",
    "cable",
    "cabling",
    "versions",
    "loopback",
    "rdma",
    "rdma_path",
    "rdma_lat",
    "tcp",
    "nccl",
    "soak",
    "qos",
    "kernel_log",
]
"""Every phase of a session; each runs at most once (`shell`: do the nodes answer at all)."""


def result_error(r: RunResult, tool: str) -> str | None:
    """Why a run gave nothing to parse (transport, deadline, missing tool), or None."""
    if failure := r.failure() or getattr(could_not_run(r), "reason", None):
        return failure
    if r.rc != 0 and not r.stdout.strip():
        err = r.stderr.strip().splitlines()
        return f"{r.node}: {tool} failed (rc {r.rc}): {err[-1] if err else 'no output'}"
    return None


def parsed(r: RunResult, tool: str, parse: Callable[[str], T]) -> Measured[T]:
    """A run's stdout through `parse`, or why there is nothing to parse (the tool's own words)."""
    if (unmeasured := could_not_run(r)) is not None:
        return Measured.not_measured(unmeasured)
    if err := result_error(r, tool):
        return Measured.failed(err)
    try:
        return Measured.of(parse(r.stdout))
    except ParseError as exc:
        return Measured.failed(f"{r.node}: {exc}")


class Fabric:
    """The cache of phase results and the runner of their jobs, for one session."""

    def __init__(
        self,
        cluster: Cluster,
        transport: Transport,
        *,
        progress: Progress | None = None,
        status: Status | None = None,
        plan: Plan | None = None,
    ) -> None:
        from pytest_sparkfabric.cluster import plan as planning
        from pytest_sparkfabric.cluster.model import resolve

        self.cluster = cluster
        self.transport = transport
        self.plan: Plan = plan or planning.plan(cluster)
        self.thresholds: Mapping[ThresholdName, Threshold] = resolve(cluster)
        self.progress: Progress = progress or (lambda _line: None)
        self.status: Status = status or (lambda line, _done: self.progress(line))
        """Where `detail` lines go when given (a status line updated in place), else progress."""
        self._done: dict[PhaseName, Any] = {}
        self._locks: dict[PhaseName, threading.Lock] = {}
        self._lost: dict[str, str] = {}
        self._guard = threading.Lock()
        self.started_s = transport.clock.now()
        """When the session began on the transport's clock (the kernel log's window opens here)."""
        self.timings: dict[PhaseName, tuple[float, float | None]] = {}
        """Phase -> (wall-clock seconds, transport-clock seconds) it took, for the report."""

    def limit(self, name: ThresholdName, *over: Rail) -> Threshold:
        """The threshold `name` over these rails (bandwidth floors follow their slowest speed)."""
        from pytest_sparkfabric.cluster.model import declared_mbps

        th = self.thresholds[name]
        return th.at_speed(declared_mbps(*over)) if over else th

    def phase(self, name: PhaseName, measure: Callable[[Fabric], R]) -> R:
        """`measure(self)` once per session under `name`; concurrent callers wait for the first.
        A phase that raises is not kept: the next caller runs it again (not a stale error)."""
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if name in self._done:
                return self._done[name]  # type: ignore[no-any-return]
            real0, clock0 = time.monotonic(), self.transport.clock.now()
            value = measure(self)
            with self._guard:
                self._done[name] = value
                self.timings[name] = (time.monotonic() - real0, self.transport.clock.now() - clock0)
            return value

    def measured(self, name: PhaseName, kind: type[R]) -> R | None:
        """What phase `name` produced if it has run (None if not), without running it."""
        with self._guard:
            value = self._done.get(name)
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"phase {name} holds {type(value).__name__}, not {kind.__name__}")
        return value

    def detail(self, line: str, done: float | None = None) -> None:
        """A progress line worth reading only while it takes real time (a round of a phase,
        `done` of it done): on a modelled clock (simulator, replay) it is over in a moment."""
        if self.cluster.spec.transport == "ssh":
            self.status(line, done)

    def run_all(self, jobs: Sequence[Job]) -> list[RunResult]:
        """Run jobs concurrently; a job on a node found unreachable fails at once with its line."""
        down = self.unreachable()
        live = [j for j in jobs if j.node not in down]
        done = iter(self.transport.run_many(live) if live else [])
        return [not_run(j, down[j.node]) if j.node in down else next(done) for j in jobs]

    def unreachable(self) -> dict[str, str]:
        """Nodes whose shell did not answer the session's first command, or that stopped
        answering later (`lose`): node -> the one line why. Asked once, all nodes at once, so
        an unreachable cluster costs one connect timeout, not one per phase."""
        down = self.phase("shell", _shells)
        with self._guard:
            return {**self._lost, **down}

    @property
    def lost(self) -> dict[str, str]:
        """Nodes that answered at the start and stopped answering ssh during the run."""
        with self._guard:
            return dict(self._lost)

    def lose(self, why: NotMeasured) -> None:
        """Mark the nodes of a run that lost its ssh as gone: every later job on them is not
        measured at once."""
        down = self.measured("shell", dict) or {}
        for node in (n for n in why.nodes if n not in down):
            detail = why.reason.removeprefix(f"{node}: ").removeprefix("ssh: ")
            with self._guard:
                self._lost.setdefault(node, f"{node} stopped answering ssh ({detail})")

    def gone(self, nodes: Iterable[str]) -> NotMeasured | None:
        """Why some of `nodes` cannot be measured (they do not answer ssh), or None."""
        down = self.unreachable()
        if lost := [n for n in dict.fromkeys(nodes) if n in down]:
            return NotMeasured(
                "; ".join(down[n] for n in lost), nodes=lost, missing="ssh", fix=SSH_FIX
            )
        return None

    def reachable(self) -> list[str]:
        """The nodes that answered, in cluster.yaml order."""
        down = self.unreachable()
        return [n.name for n in self.cluster.nodes if n.name not in down]


def _shells(fabric: Fabric) -> dict[str, str]:
    nodes = [n.name for n in fabric.cluster.nodes]
    results = fabric.transport.run_many([Job(n, REACH_COMMAND, QUICK_S) for n in nodes])
    if down := {r.node: r.transport_error for r in results if r.transport_error}:
        fabric.progress(
            f"{len(down)} of {len(nodes)} nodes not reachable; their tests are not measured: "
            + "; ".join(down.values())
        )
    return down
