"""The kernel log of the session's window: one read per node, all at once, after the traffic and
the soak (a stamped line stays in the log, so one late read sees everything). The window is the
session's length on our clock counted back from the node's /proc/uptime: only rates must agree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.dmesg import COMMAND, KernelEvent, KernelLog, parse_kernel_log
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "kernel_log"
SLACK_S = 2.0
"""The window opens this much before the session did: the first ssh connect, clock ticks."""
READ_FIX = (
    "let the suite's user read the kernel log: `sudo usermod -aG adm $USER` (journalctl -k; "
    "log in again), or `sudo sysctl -w kernel.dmesg_restrict=0` (dmesg; "
    "/etc/sysctl.d/ to keep it)"
)


@dataclass(frozen=True, slots=True)
class SessionLog:
    """One node's kernel log over the session: its events from `start_s` (seconds since boot)."""

    log: KernelLog
    start_s: float
    session_s: float

    @property
    def events(self) -> tuple[KernelEvent, ...]:
        return self.log.since(self.start_s)

    def offset(self, e: KernelEvent) -> str:
        """When in the session an event was stamped: `+12.3 s`."""
        return f"+{max(0.0, e.time_s - self.start_s - SLACK_S):.1f} s"


def _session_log(r: RunResult, session_s: float) -> Measured[SessionLog]:
    if r.transport_error or r.timed_out:
        gap = could_not_run(r)
        return Measured.not_measured(gap) if gap else Measured.failed(r.failure() or r.node)
    try:
        log = parse_kernel_log(r.stdout)
    except ParseError as exc:
        return Measured.failed(f"{r.node}: {exc}")
    if log.uptime_s is None:
        return Measured.failed(f"{r.node}: no /proc/uptime line before the kernel log")
    return Measured.of(SessionLog(log, log.uptime_s - session_s - SLACK_S, session_s))


def measure(fabric: Fabric) -> Mapping[str, Measured[SessionLog]]:
    session_s = fabric.transport.clock.now() - fabric.started_s
    results = fabric.run_all([Job(n.name, COMMAND, QUICK_S) for n in fabric.cluster.nodes])
    return {r.node: _session_log(r, session_s) for r in results}


def session_log(fabric: Fabric, node: str) -> Measured[SessionLog]:
    return fabric.phase(NAME, measure)[node]
