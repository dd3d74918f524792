"""The one counter log: labelled snapshots of named counters per object (a host rail, a switch
leg) and the windows between them (growth, rate). A counter that went back (reset, reboot) is
not growth: it is listed in `went_back`. What counters mean is the readers' business.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

Values = Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One object's counters at transport-clock time `t_s`."""

    t_s: float
    values: Values = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Window:
    """One object's counters across one step (`label`) of a phase, or why it was not measured."""

    phase: str
    label: str
    start_s: float
    end_s: float
    growth: Values = field(default_factory=dict)
    """Growth of every counter read at both ends that did not go back."""
    went_back: tuple[str, ...] = ()
    error: str | None = None

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s

    def rate(self, name: str) -> float:
        return self.growth.get(name, 0) / self.seconds if self.seconds > 0 else 0.0

    def grown(self, names: Sequence[str]) -> dict[str, int]:
        return {n: self.growth[n] for n in names if self.growth.get(n, 0) > 0}


def window(phase: str, label: str, a: Snapshot, b: Snapshot) -> Window:
    growth = {k: b.values[k] - v for k, v in a.values.items() if k in b.values}
    back = tuple(sorted(k for k, v in growth.items() if v < 0))
    kept = {k: v for k, v in growth.items() if v >= 0}
    return Window(phase, label, a.t_s, b.t_s, kept, back)


def windows(phase: str, snaps: Sequence[tuple[str, Snapshot]]) -> list[Window]:
    """The windows between consecutive labelled snapshots (each labelled by its later end)."""
    return [window(phase, lb, a, b) for (_, a), (lb, b) in itertools.pairwise(snaps)]


@dataclass
class Log:
    """Every window of the session by object id, in the order they ran."""

    by_object: dict[str, list[Window]] = field(default_factory=dict)
    not_watched: str | None = None
    """Why no window reads these objects at all (no switch, switch not readable), once known."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, obj: str, w: Window) -> None:
        with self._lock:
            self.by_object.setdefault(obj, []).append(w)

    def of(self, obj: str, phase: str | None = None) -> tuple[Window, ...]:
        """`obj`'s windows, of one phase or (None) all."""
        with self._lock:
            return tuple(w for w in self.by_object.get(obj, ()) if phase in (None, w.phase))


Reader = Callable[[], Mapping[str, Snapshot | str]]
"""Reads every watched object now: its snapshot, or why it could not be read."""


@dataclass
class Watch:
    """Snapshots of `objects` at each step boundary of a phase, windows into `log`."""

    log: Log
    phase: str
    objects: tuple[str, ...]
    read: Reader
    last: Mapping[str, Snapshot | str] = field(default_factory=dict)

    def start(self, now: Mapping[str, Snapshot | str] | None = None) -> Watch:
        """The first snapshots: read now, or `now` when the caller read them with other work."""
        if self.objects:
            self.last = now if now is not None else self.read()
        return self

    def step(
        self, label: str, now: Mapping[str, Snapshot | str] | None = None
    ) -> dict[str, Window]:
        """The windows since the last step (also added to the log), by object; `now`: as in
        `start`."""
        if not self.objects:
            return {}
        now = now if now is not None else self.read()
        out: dict[str, Window] = {}
        for obj in self.objects:
            a, b = self.last.get(obj, "no snapshot before"), now.get(obj, "no snapshot after")
            if isinstance(a, Snapshot) and isinstance(b, Snapshot):
                out[obj] = window(self.phase, label, a, b)
            else:
                why = a if isinstance(a, str) else str(b)
                t = b.t_s if isinstance(b, Snapshot) else 0.0
                out[obj] = Window(self.phase, label, t, t, error=why)
            self.log.add(obj, out[obj])
        # A snapshot that could not be read keeps the last good one as the next window's start.
        self.last = {
            k: v if isinstance(v, Snapshot) else self.last.get(k, v) for k, v in now.items()
        }
        return out
