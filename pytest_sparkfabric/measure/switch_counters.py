"""The switch during traffic: each leg's `print stats` as windows of the counter log, and the
cpu-load sampled while traffic flows (software forwarding shows only then). A no-op that says
why outside a switch cluster; it never fails a measurement. docs/measurement.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_sparkfabric.measure import counters
from pytest_sparkfabric.measure import switch as switch_phase
from pytest_sparkfabric.measure.flows import FlowResult, run_flows
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.transport.rest import SwitchError

if TYPE_CHECKING:
    from collections.abc import Hashable

    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric, PhaseName
    from pytest_sparkfabric.measure.flows import Flow
    from pytest_sparkfabric.measure.switch import Reads

NAME: PhaseName = "switch_counters"
CPU_EVERY_S = 2.0
"""Seconds between two cpu-load samples during traffic (RouterOS's cpu-load is a short
average; a few samples per 10 s round catch a busy CPU)."""

Direction = Literal["host->switch", "switch->host", ""]


@dataclass(frozen=True, slots=True)
class Counter:
    """A switch counter that must not grow during traffic, and what its growth means."""

    name: str
    rule: RuleId | None
    meaning: str
    direction: Direction


# Counter names: MikroTik manual, ethernet.md "Stats"; rs-fec-* exist in fec91 mode only.
WATCHED: tuple[Counter, ...] = (
    Counter("rx-fcs-error", "post_fec_errors",
            "frames from the host arrived corrupted at the switch", "host->switch"),
    Counter("rs-fec-uncorrected", "post_fec_errors",
            "codewords FEC could not correct at the switch's receiver", "host->switch"),
    Counter("rx-error-events", "post_fec_errors",
            "receive errors at the switch port", "host->switch"),
    Counter("rx-drop", None, "frames the switch dropped on receive", "host->switch"),
    Counter("tx-drop", None, "frames the switch dropped on transmit", "switch->host"),
    Counter("tx-drop-packet", None, "frames the switch dropped on transmit", "switch->host"),
    Counter("rx-pause", "pfc_stall", "the host sent pause frames (flow control/PFC on)",
            "host->switch"),
    Counter("tx-pause", "pfc_stall", "the switch sent pause frames (flow control/PFC on)",
            "switch->host"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CpuSample:
    label: str
    """The traffic window it was sampled in."""
    at_s: float
    """Transport-clock seconds since the window began."""
    load_pct: int | None
    error: str | None = None


@dataclass
class Log:
    """Every traffic window of the session: the legs' counters (the one counter log, by leg)
    and the cpu-load samples taken while the traffic flowed."""

    legs: counters.Log = field(default_factory=counters.Log)
    cpu: list[CpuSample] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def sample(self, s: CpuSample) -> None:
        with self._lock:
            self.cpu.append(s)


def measure(fabric: Fabric) -> Log:
    """An empty log: each traffic phase adds its windows (`watch`)."""
    return Log()


def log(fabric: Fabric) -> Log:
    """The session's windows so far: each traffic phase adds its own (`watch`)."""
    return fabric.phase(NAME, measure)


def _snapshot(fabric: Fabric, reads: Reads, legs: list[str]) -> dict[str, counters.Snapshot | str]:
    t_s = fabric.transport.clock.now()
    try:
        stats = reads.stats(legs)
    except (SwitchError, ParseError) as exc:
        return {leg: f"switch: print stats: {exc}" for leg in legs}
    return {
        leg: counters.Snapshot(t_s, stats[leg].counters)
        if leg in stats
        else f"switch: print stats shows no {leg}"
        for leg in legs
    }


@contextmanager
def watch(fabric: Fabric, label: str) -> Iterator[Callable[[], None] | None]:
    """A window over the traffic inside it: the legs' counters before and after, and a tick
    that samples the cpu-load (call it every CPU_EVERY_S s while the traffic flows). None
    outside a switch cluster or when the switch cannot be read (`Log.legs.not_watched`)."""
    spec = fabric.cluster.spec.switch
    if fabric.cluster.topology != "switch" or spec is None:
        yield None
        return
    state = switch_phase.state(fabric)
    reads = state.value.reads if state.value is not None else None
    if reads is None:
        log(fabric).legs.not_watched = state.error or "the switch was not read"
        yield None
        return
    legs = list(spec.ports.values())
    start = fabric.transport.clock.now()
    w = counters.Watch(log(fabric).legs, NAME, tuple(legs), lambda: _snapshot(fabric, reads, legs))

    def tick() -> None:
        at = fabric.transport.clock.now() - start
        try:
            sample = CpuSample(label, at, reads.resource().cpu_load_pct)
        except Exception as exc:  # a sample that fails is kept as such; traffic goes on
            sample = CpuSample(label, at, None, f"switch: /system resource: {exc}")
        log(fabric).sample(sample)

    w.start()
    try:
        yield tick
    except Exception:
        w.step(label)  # the window of traffic that failed still counts (an interrupt does not)
        raise
    w.step(label)


def run_watched(fabric: Fabric, label: str, flows: Sequence[Flow]) -> dict[Hashable, FlowResult]:
    """`run_flows` inside a window named `label` (`watch`)."""
    with watch(fabric, label) as tick:
        return run_flows(fabric.transport, flows, tick=tick, every_s=CPU_EVERY_S)


# -- what the items read ------------------------------------------------------------------


@dataclass(frozen=True)
class Growth:
    counter: Counter
    total: int
    by_window: tuple[tuple[str, int], ...]


def unread(w: counters.Window) -> str | None:
    """Why a leg's window tells nothing: not read, or its counters went back (reset, reboot)."""
    if w.error is not None:
        return w.error
    if w.went_back:
        return f"switch: {', '.join(w.went_back)} went back (reset or reboot during traffic)"
    return None


def leg_growth(windows: Sequence[counters.Window]) -> list[Growth]:
    """The watched counters that grew in these windows of one leg, with the windows."""
    out = []
    for counter in WATCHED:
        parts = tuple((w.label, d) for w in windows if (d := w.growth.get(counter.name, 0)) > 0)
        if parts:
            out.append(Growth(counter, sum(d for _, d in parts), parts))
    return out


def peak_cpu_pct(fabric: Fabric) -> float | None:
    """The highest cpu-load sampled during traffic so far, or None (none sampled)."""
    loads = [s.load_pct for s in log(fabric).cpu if s.load_pct is not None]
    return float(max(loads)) if loads else None
