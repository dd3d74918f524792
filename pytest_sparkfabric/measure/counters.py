"""Lossy-RoCE and congestion counters, host side: snapshots, deltas across a window, a judgement.

What is read per rail (mlx5 counters.rst; drivers/infiniband/hw/mlx5/counters.c; research/
FACTS.md §7): `ethtool -S` `rx_discards_phy` (frames the NIC dropped for lack of buffer),
`rx_out_of_buffer` (no receive WQE), `rx_prioN_discards`, pause frames (`rx/tx_pause_ctrl_phy`,
and `rx/tx_prioN_pause`, present only on priorities with PFC on), ECN marks (`rx_ecn_mark`); and
the RDMA port's `hw_counters`: `out_of_sequence`, `packet_seq_err`, `local_ack_timeout_err`,
`out_of_buffer`, ECN/CNP (`np_ecn_marked_roce_packets`, `np_cnp_sent`, `rp_cnp_handled`).

The small API (the bandwidth rounds use it; the soak can too): `read(fabric, rails)` takes a
snapshot of each rail, `delta(before, after)` the growth between two, `judge(delta, ...)` what
in that growth fails. A lossless configuration (PFC on, on host or switch) must drop nothing:
any discard, out-of-sequence, sequence-error or ack-timeout growth fails. A lossy one (PFC off,
the working Spark builds) may lose a little and retransmit, but discards above
`thresholds.discard_pct` of the frames received fail. Pause, ECN and CNP growth is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_sparkfabric.measure.engine import QUICK_S, result_error
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import build_ethtool_stats, parse_ethtool_stats
from pytest_sparkfabric.probes.hw_counters import build_hw_counters, parse_hw_counters
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.measure.engine import Fabric

HW = "hw:"
"""Prefix of the RDMA hw_counters in a snapshot (ethtool names stand bare)."""
RX_FRAMES = "rx_packets_phy"
Kind = Literal["discard", "sequence", "pause", "congestion"]

_KINDS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (
        "discard",
        re.compile(r"^(rx_discards_phy|rx_out_of_buffer|rx_prio\d_discards|hw:out_of_buffer)$"),
    ),
    ("sequence", re.compile(r"^hw:(out_of_sequence|packet_seq_err|local_ack_timeout_err)$")),
    ("pause", re.compile(r"^(rx|tx)_(pause_ctrl_phy|prio\d_pause|global_pause)$")),
    (
        "congestion",
        re.compile(r"^(rx_ecn_mark|hw:(np_ecn_marked_roce_packets|np_cnp_sent|rp_cnp_handled))$"),
    ),
)


def kind_of(name: str) -> Kind | None:
    return next((k for k, pattern in _KINDS if pattern.match(name)), None)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One rail's watched counters at one moment (`t_s`: transport clock)."""

    t_s: float
    values: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Delta:
    """Growth of every counter present in both snapshots (a counter that went backwards, a
    reset, is left out), and of the received frames that put the discards in proportion."""

    seconds: float
    growth: Mapping[str, int]
    rx_frames: int | None

    def of_kind(self, kind: Kind) -> dict[str, int]:
        return {k: v for k, v in self.growth.items() if v > 0 and kind_of(k) == kind}


@dataclass(frozen=True, slots=True)
class Finding:
    counter: str
    growth: int
    why: str


def snapshot(t_s: float, stats: Mapping[str, int], hw: Mapping[str, int] | None) -> Snapshot:
    values = {k: v for k, v in stats.items() if kind_of(k) is not None or k == RX_FRAMES}
    for k, v in (hw or {}).items():
        if kind_of(HW + k) is not None:
            values[HW + k] = v
    return Snapshot(t_s, values)


def delta(before: Snapshot, after: Snapshot) -> Delta:
    growth = {
        k: after.values[k] - v
        for k, v in before.values.items()
        if k in after.values and k != RX_FRAMES and after.values[k] >= v
    }
    a, b = before.values.get(RX_FRAMES), after.values.get(RX_FRAMES)
    frames = b - a if a is not None and b is not None and b >= a else None
    return Delta(after.t_s - before.t_s, growth, frames)


def judge(d: Delta, *, lossless: bool, discard_pct_max: float) -> list[Finding]:
    """What in this growth fails: on a lossless rail any drop or sequence error; on a lossy one
    discards above `discard_pct_max` percent of the frames received in the window."""
    out: list[Finding] = []
    if lossless:
        for name, n in sorted({**d.of_kind("discard"), **d.of_kind("sequence")}.items()):
            out.append(Finding(name, n, "grew on a lossless (PFC) configuration, expected 0"))
        return out
    for name, n in sorted(d.of_kind("discard").items()):
        if d.rx_frames is None or d.rx_frames <= 0:
            out.append(Finding(name, n, "grew with no received-frame count to compare"))
            continue
        pct = 100.0 * n / d.rx_frames
        if pct > discard_pct_max:
            out.append(
                Finding(
                    name,
                    n,
                    f"{pct:.3g}% of {d.rx_frames} frames received, expected "
                    f"<= {discard_pct_max:g}%",
                )
            )
    return out


def read(fabric: Fabric, rails: Sequence[Rail], t_s: float) -> dict[str, Measured[Snapshot]]:
    """One snapshot per rail: `ethtool -S` of each netdev and one hw_counters read per node,
    all at once."""
    nodes = list(dict.fromkeys(r.node for r in rails))
    jobs = [Job(r.node, build_ethtool_stats(r.netdev), QUICK_S) for r in rails]
    jobs += [
        Job(n, build_hw_counters([r.rdma for r in rails if r.node == n]), QUICK_S) for n in nodes
    ]
    results = fabric.run_all(jobs)
    hw: dict[str, Mapping[str, int] | None] = {}
    for n, r in zip(nodes, results[len(rails) :], strict=True):
        try:
            sets = parse_hw_counters(r.stdout).ports if r.ok else ()
        except ParseError:
            sets = ()
        for s in sets:
            if s.device is not None:
                hw[f"{n}/{s.device}"] = s.counters
    out: dict[str, Measured[Snapshot]] = {}
    for rail, r in zip(rails, results[: len(rails)], strict=True):
        err = result_error(r, "ethtool")
        if err:
            out[rail.id] = Measured.failed(err)
            continue
        try:
            stats = parse_ethtool_stats(r.stdout)
        except ParseError as exc:
            out[rail.id] = Measured.failed(f"{rail.node}: {exc}")
            continue
        out[rail.id] = Measured.of(snapshot(t_s, stats, hw.get(f"{rail.node}/{rail.rdma}")))
    return out


@dataclass(frozen=True, slots=True)
class Window:
    """One rail's growth over one step of a phase (`label`: which round)."""

    label: str
    delta: Measured[Delta]


@dataclass
class Watch:
    """Snapshots of every rail at each step boundary of a phase, and the windows between."""

    fabric: Fabric
    rails: tuple[Rail, ...]
    last: dict[str, Measured[Snapshot]] = field(default_factory=dict)
    windows: dict[str, list[Window]] = field(default_factory=dict)

    def start(self) -> Watch:
        if self.rails:
            self.last = read(self.fabric, self.rails, self.fabric.transport.clock.now())
        return self

    def step(self, label: str) -> None:
        if not self.rails:
            return
        now = read(self.fabric, self.rails, self.fabric.transport.clock.now())
        for rail in self.rails:
            a, b = self.last.get(rail.id), now[rail.id]
            if a is None or a.value is None or b.value is None:
                why = (a.error if a is not None and a.error else None) or b.error or "no snapshot"
                d: Measured[Delta] = Measured.failed(why)
            else:
                d = Measured.of(delta(a.value, b.value))
            self.windows.setdefault(rail.id, []).append(Window(label, d))
        self.last = now

    def result(self) -> dict[str, tuple[Window, ...]]:
        return {k: tuple(v) for k, v in self.windows.items()}
