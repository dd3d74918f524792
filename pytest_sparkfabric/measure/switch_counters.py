"""The switch during traffic: each leg's counters as deltas across every traffic window (each
bandwidth round, the heat soak), and the switch's CPU load sampled while the traffic flows.

A window reads `print stats` of every leg before and after (REST or the SSH console, as the
switch is read: `switch_access`) and `/system resource` every CPU_EVERY_S seconds in between.
A counter that grows on a leg during traffic names the leg, the cable and the direction:
the switch's `rx-*` errors count frames the host sent, so they accuse the host->switch
direction of that cable (the host's transmitter, the cable, the switch port's receiver); the
host's own receive counters (`ethtool -S`) tell the other direction. A CPU load that is high
while fabric traffic crosses the switch is software forwarding (~10 Gb/s ceilings, DOMAIN.md
section 7); a read after the traffic ended cannot tell, so the load is sampled during it.

Outside a switch cluster (or when the switch cannot be read) a window is a no-op that says
why; nothing here ever fails a measurement.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_sparkfabric.measure import switch as switch_phase
from pytest_sparkfabric.measure.flows import FlowResult, run_flows
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.transport.rest import SwitchError

if TYPE_CHECKING:
    from collections.abc import Hashable
    from types import TracebackType

    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric, PhaseName
    from pytest_sparkfabric.measure.flows import Flow
    from pytest_sparkfabric.measure.switch_access import Reads

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
INFO = ("rs-fec-corrected",)
"""Grows on healthy links (errors FEC corrected): recorded, never failed."""


@dataclass(frozen=True, slots=True)
class CpuSample:
    at_s: float
    """Transport-clock seconds since the window began."""
    load_pct: int | None
    error: str | None = None


@dataclass(frozen=True)
class Window:
    """One traffic window (a bandwidth round, the soak) as the switch saw it."""

    label: str
    start_s: float
    end_s: float
    deltas: Mapping[str, Mapping[str, int]]
    """Leg -> counter -> growth during the window (only counters read both times)."""
    errors: Mapping[str, str] = field(default_factory=dict)
    """Leg -> why its counters were not measured in this window."""
    cpu: tuple[CpuSample, ...] = ()


@dataclass
class Log:
    """Every window of the session, in the order they ran."""

    windows: list[Window] = field(default_factory=list)
    not_watched: str | None = None
    """Why no window reads the switch (no switch, switch not readable), once known."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, window: Window) -> None:
        with self._lock:
            self.windows.append(window)


def measure(fabric: Fabric) -> Log:
    """An empty log: the windows are added as the traffic phases run (`watch`)."""
    return Log()


def log(fabric: Fabric) -> Log:
    """The session's windows so far (nothing is measured by asking)."""
    return fabric.phase(NAME, measure)


def _legs(fabric: Fabric) -> list[str]:
    spec = fabric.cluster.spec.switch
    return list(spec.ports.values()) if spec is not None else []


class Watch:
    """A traffic window: `with watch(fabric, label) as w:` around the traffic, `w.tick` called
    every CPU_EVERY_S seconds while it flows (`Transport.run_many_ticking`)."""

    def __init__(self, fabric: Fabric, label: str, reads: Reads | None, why_not: str | None):
        self.fabric = fabric
        self.label = label
        self.reads = reads
        self.why_not = why_not
        self.legs = _legs(fabric)
        self._start = 0.0
        self._before: dict[str, Mapping[str, int]] = {}
        self._errors: dict[str, str] = {}
        self._cpu: list[CpuSample] = []

    @property
    def active(self) -> bool:
        return self.reads is not None

    def _snapshot(self) -> dict[str, Mapping[str, int]]:
        assert self.reads is not None
        try:
            stats = self.reads.stats(self.legs)
        except (SwitchError, ParseError) as exc:
            for leg in self.legs:
                self._errors.setdefault(leg, f"switch: print stats: {exc}")
            return {}
        for leg in self.legs:
            if leg not in stats:
                self._errors.setdefault(leg, f"switch: print stats shows no {leg}")
        return {leg: s.counters for leg, s in stats.items()}

    def __enter__(self) -> Watch:
        self._start = self.fabric.transport.clock.now()
        if self.reads is not None:
            self._before = self._snapshot()
        return self

    def tick(self) -> None:
        """One cpu-load sample now; never raises."""
        if self.reads is None:
            return
        at = self.fabric.transport.clock.now() - self._start
        try:
            load = self.reads.resource().cpu_load_pct
            self._cpu.append(CpuSample(at, load))
        except Exception as exc:  # a sample that fails is kept as such; traffic goes on
            self._cpu.append(CpuSample(at, None, f"switch: /system resource: {exc}"))

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.reads is None or (kind is not None and not issubclass(kind, Exception)):
            return
        end = self.fabric.transport.clock.now()
        after = self._snapshot()
        deltas: dict[str, dict[str, int]] = {}
        for leg, now in after.items():
            was = self._before.get(leg)
            if was is None:
                continue
            grew = {k: v - was[k] for k, v in now.items() if k in was}
            if any(d < 0 for d in grew.values()):
                self._errors.setdefault(
                    leg, f"switch: {leg}'s counters went back (reset or reboot during traffic)"
                )
                continue
            deltas[leg] = grew
        log(self.fabric).add(
            Window(
                self.label,
                self._start,
                end,
                deltas,
                dict(self._errors),
                tuple(self._cpu),
            )
        )


def watch(fabric: Fabric, label: str) -> Watch:
    """A window over the traffic that follows; inactive outside a switch cluster or when the
    switch cannot be read (`Log.not_watched` says why)."""
    if fabric.cluster.topology != "switch" or fabric.cluster.spec.switch is None:
        return Watch(fabric, label, None, "no switch in this cluster")
    state = switch_phase.state(fabric)
    reads = state.value.reads if state.value is not None else None
    if reads is None:
        why = state.error or "the switch was not read"
        log(fabric).not_watched = why
        return Watch(fabric, label, None, why)
    return Watch(fabric, label, reads, None)


def run_watched(fabric: Fabric, label: str, flows: Sequence[Flow]) -> dict[Hashable, FlowResult]:
    """`run_flows` inside a window named `label`: the legs' counters before and after, the
    switch's cpu-load every CPU_EVERY_S seconds while the clients run."""
    with watch(fabric, label) as w:
        tick = w.tick if w.active else None
        return run_flows(fabric.transport, flows, tick=tick, every_s=CPU_EVERY_S)


# -- what the items read ------------------------------------------------------------------


@dataclass(frozen=True)
class Growth:
    counter: Counter
    total: int
    by_window: tuple[tuple[str, int], ...]


def leg_growth(windows: Sequence[Window], leg: str) -> list[Growth]:
    """The watched counters that grew on `leg`, with the windows they grew in."""
    out = []
    for counter in WATCHED:
        parts = tuple(
            (w.label, d) for w in windows if (d := w.deltas.get(leg, {}).get(counter.name, 0)) > 0
        )
        if parts:
            out.append(Growth(counter, sum(d for _, d in parts), parts))
    return out


def measured_windows(windows: Sequence[Window], leg: str) -> list[Window]:
    return [w for w in windows if leg in w.deltas]


def cpu_samples(windows: Sequence[Window]) -> list[tuple[Window, CpuSample]]:
    return [(w, s) for w in windows for s in w.cpu if s.load_pct is not None]


def peak_cpu_pct(fabric: Fabric) -> float | None:
    """The highest cpu-load sampled during traffic so far, or None (none sampled)."""
    loads = [s.load_pct for _, s in cpu_samples(log(fabric).windows) if s.load_pct is not None]
    return float(max(loads)) if loads else None
