"""The one counter log of every traffic phase: labelled snapshots of named counters per object (a
host rail's `ethtool -S` and RDMA `hw_counters`, a switch leg's `print stats`), the windows between
them (growth; a counter that went back is not growth) and what growth fails (DOMAIN.md §6, §7)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from pytest_sparkfabric.measure import qos
from pytest_sparkfabric.measure import switch as switch_phase
from pytest_sparkfabric.measure.engine import QUICK_S, parsed, result_error
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import build_ethtool_stats, parse_ethtool_stats
from pytest_sparkfabric.probes.hw_counters import build_hw_counters, parse_hw_counters
from pytest_sparkfabric.transport import Job, RunResult
from pytest_sparkfabric.transport.rest import SwitchError

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric, PhaseName
    from pytest_sparkfabric.verdict import Verdict

NAME: PhaseName = "rail_counters"
LEGS: PhaseName = "switch_counters"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One object's counters at transport-clock time `t_s`; `partial`: why some of them (a rail's
    RDMA hw_counters) could not be read."""

    t_s: float
    values: Mapping[str, int] = field(default_factory=dict)
    partial: str | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """One object's counters across one step (`label`) of a phase, or why it was not measured;
    `growth` holds every counter read at both ends that did not go back (`partial`: why some
    were not, from either end's snapshot)."""

    phase: str
    label: str
    start_s: float
    end_s: float
    growth: Mapping[str, int] = field(default_factory=dict)
    went_back: tuple[str, ...] = ()
    error: str | None = None
    partial: str | None = None

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s

    def rate(self, name: str) -> float:
        return self.growth.get(name, 0) / self.seconds if self.seconds > 0 else 0.0


def window(phase: str, label: str, a: Snapshot, b: Snapshot) -> Window:
    growth = {k: b.values[k] - v for k, v in a.values.items() if k in b.values}
    back = tuple(sorted(k for k, v in growth.items() if v < 0))
    kept = {k: v for k, v in growth.items() if v >= 0}
    return Window(phase, label, a.t_s, b.t_s, kept, back, partial=a.partial or b.partial)


@dataclass(frozen=True, slots=True)
class CpuSample:
    label: str  # the traffic window it was sampled in
    at_s: float
    load_pct: int | None
    error: str | None = None


@dataclass
class Log:
    """Every window of the session by object id, in the order they ran."""

    by_object: dict[str, list[Window]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, obj: str, w: Window) -> None:
        with self._lock:
            self.by_object.setdefault(obj, []).append(w)

    def of(self, obj: str, phase: str | None = None) -> tuple[Window, ...]:
        with self._lock:
            return tuple(w for w in self.by_object.get(obj, ()) if phase in (None, w.phase))


@dataclass
class SwitchLog(Log):
    """The switch legs' log, with the cpu-load sampled during traffic and why no window reads
    the switch at all (`not_watched`): they describe the run, not a rail."""

    cpu: list[CpuSample] = field(default_factory=list)
    not_watched: str | None = None


Reads = Mapping[str, Snapshot | str]  # each watched object's snapshot, or why it was not read


@dataclass
class Watch:
    """Snapshots of `objects` at each step boundary of a phase, windows into `log`."""

    log: Log
    phase: str
    objects: tuple[str, ...]
    read: Callable[[], Reads]
    last: Reads | None = None

    def step(self, label: str = "", now: Reads | None = None) -> dict[str, Window]:
        """The windows since the last step by object, also added to the log (the first step only
        takes the start); `now`: the reads, when the caller made them with other work."""
        if not self.objects:
            return {}
        now = now if now is not None else self.read()
        last = self.last
        # A snapshot that could not be read keeps the last good one as the next window's start.
        self.last = {
            k: v if isinstance(v, Snapshot) else (last or {}).get(k, v) for k, v in now.items()
        }
        if last is None:
            return {}
        out: dict[str, Window] = {}
        for obj in self.objects:
            a, b = last.get(obj, "no snapshot before"), now.get(obj, "no snapshot after")
            if isinstance(a, Snapshot) and isinstance(b, Snapshot):
                out[obj] = window(self.phase, label, a, b)
            else:
                t = b.t_s if isinstance(b, Snapshot) else 0.0
                out[obj] = Window(
                    self.phase, label, t, t, error=a if isinstance(a, str) else str(b)
                )
            self.log.add(obj, out[obj])
        return out


def measure(fabric: Fabric) -> Log:
    """An empty log: each traffic phase adds its windows (`watch_rails`, `watch_switch`)."""
    return Log()


def rail_log(fabric: Fabric) -> Log:
    return fabric.phase(NAME, measure)


def switch_log(fabric: Fabric) -> SwitchLog:
    return fabric.phase(LEGS, lambda _: SwitchLog())


# -- host rails ---------------------------------------------------------------------------------

HW = "hw:"  # the prefix of the RDMA hw_counters in a rail's snapshot
RX_FRAMES = "rx_packets_phy"
POST_FEC: Mapping[str, RuleId] = {
    "link_down_events_phy": "link_down",
    "rx_pcs_symbol_err_phy": "post_fec_errors",
    "rx_crc_errors_phy": "post_fec_errors",
}
"""Counters that must not grow at all during traffic, and the rule their growth points to."""
Kind = Literal["discard", "sequence", "pause", "congestion"]
# One alternation with a named group per kind: a counter name is matched once, not per kind
# (a few hundred names in each rail's every window).
_KINDS = re.compile(
    r"^(?:(?P<discard>rx_discards_phy|rx_out_of_buffer|rx_prio\d_discards|hw:out_of_buffer)"
    r"|(?P<sequence>hw:(?:out_of_sequence|packet_seq_err|local_ack_timeout_err))"
    r"|(?P<pause>(?:rx|tx)_(?:pause_ctrl_phy|prio\d_pause|global_pause))"
    r"|(?P<congestion>rx_ecn_mark|hw:(?:np_ecn_marked_roce_packets|np_cnp_sent|rp_cnp_handled)))$"
)


def kind_of(name: str) -> str | None:
    m = _KINDS.match(name)
    return m.lastgroup if m else None


def of_kind(w: Window, *kinds: Kind) -> dict[str, int]:
    return {k: v for k, v in w.growth.items() if v > 0 and kind_of(k) in kinds}


def rail_jobs(rails: Sequence[Rail]) -> list[Job]:
    """`ethtool -S` of each netdev and one hw_counters read per node (to run all at once)."""
    nodes = list(dict.fromkeys(r.node for r in rails))
    out = [Job(r.node, build_ethtool_stats(r.netdev), QUICK_S) for r in rails]
    return out + [
        Job(n, build_hw_counters([r.rdma for r in rails if r.node == n]), QUICK_S) for n in nodes
    ]


def rail_reads(rails: Sequence[Rail], results: Sequence[RunResult], t_s: float) -> Reads:
    """The snapshots in the results of `rail_jobs(rails)`, or why each rail's could not be read."""
    nodes = list(dict.fromkeys(r.node for r in rails))
    hw: dict[tuple[str, str | None], Mapping[str, int]] = {}
    hw_unread: dict[str, str] = {}
    for n, r in zip(nodes, results[len(rails) :], strict=True):
        got = parsed(r, "hw_counters", parse_hw_counters)
        if got.value is None:
            hw_unread[n] = got.error or "no reading"
        else:
            hw |= {(n, s.device): s.counters for s in got.value.ports}
    out: dict[str, Snapshot | str] = {}
    for rail, r in zip(rails, results, strict=False):
        try:
            stats = result_error(r, "ethtool") or parse_ethtool_stats(r.stdout)
        except ParseError as exc:
            stats = f"{rail.node}: {exc}"
        if isinstance(stats, str):
            out[rail.id] = stats
            continue
        # Without its hw_counters the snapshot still holds the ethtool ones, and says why.
        if (rdma := hw.get((rail.node, rail.rdma))) is None:
            gap = hw_unread.get(rail.node, f"{rail.node}: hw_counters lists no {rail.rdma}")
            out[rail.id] = Snapshot(t_s, stats, gap)
        else:
            out[rail.id] = Snapshot(t_s, {**stats, **{HW + k: v for k, v in rdma.items()}})
    return out


def watch_rails(fabric: Fabric, phase: str, rails: Sequence[Rail]) -> Watch:
    """A started watch: `step(label)` after each round of traffic."""

    def read() -> Reads:
        t_s = fabric.transport.clock.now()
        return rail_reads(rails, fabric.run_all(rail_jobs(rails)), t_s)

    (watch := Watch(rail_log(fabric), phase, tuple(r.id for r in rails), read)).step()
    return watch


@dataclass(frozen=True, slots=True)
class CounterFault:
    counter: str
    growth: int
    why: str
    rule: RuleId


def judge(
    w: Window, *, lossless: bool, discard_pct_max: float, post_fec: bool = True
) -> list[CounterFault]:
    """What in this window's growth fails: any post-FEC growth (`post_fec`); on a lossless rail
    any drop or sequence error; on a lossy one discards above `discard_pct_max` percent of the
    frames received in the window."""
    why = "grew during traffic, expected no growth at all"
    out = [
        CounterFault(name, n, why, rule)
        for name, rule in POST_FEC.items()
        if post_fec and (n := w.growth.get(name, 0)) > 0
    ]
    frames = w.growth.get(RX_FRAMES)
    for name, n in sorted(of_kind(w, "discard", *(("sequence",) if lossless else ())).items()):
        if lossless:
            why = "grew on a lossless (PFC) configuration, expected 0"
        elif not frames:
            why = "grew with no received-frame count to compare"
        elif (pct := 100.0 * n / frames) > discard_pct_max:
            why = f"{pct:.3g}% of {frames} frames received, expected <= {discard_pct_max:g}%"
        else:
            continue
        out.append(CounterFault(name, n, why, "rx_discards"))
    return out


def post_fec_growth(windows: Sequence[Window], *, zeros: bool = False) -> dict[str, int]:
    """The post-FEC counters' growth over `windows`: those that grew, all with `zeros`."""
    grown = {name: sum(w.growth.get(name, 0) for w in windows) for name in POST_FEC}
    return grown if zeros else {k: v for k, v in grown.items() if v}


def describe(grown: Mapping[str, int]) -> str:
    return ", ".join(f"{k} +{v}" for k, v in grown.items()) or "none"


def totals(windows: Sequence[Window]) -> str:
    """Each kind's and each post-FEC counter's growth over `windows`, zeros too."""
    if not windows:
        return "no counters"
    sums = {k: sum(sum(of_kind(w, k).values()) for w in windows) for k in get_args(Kind)}
    return describe(sums | post_fec_growth(windows, zeros=True))


def _mode(fabric: Fabric, rail: Rail) -> tuple[bool, str]:
    """Lossless or lossy: the host's own QoS says."""
    q = qos.rail_qos(fabric, rail).value
    if q is not None and q.lossless:
        return True, f"lossless ({q.describe()})"
    return False, "lossy (PFC off or not read)"


def declare(fabric: Fabric, rail: Rail, verdict: Verdict) -> None:
    th = fabric.thresholds["discard_pct"]
    lossless, mode = _mode(fabric, rail)
    drops = f"discards {th.expected()} of frames received"
    if lossless:
        drops = "no discard or sequence-error growth"
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev)
    verdict(expected=f"no {', '.join(POST_FEC)} growth; {drops}", source=th.source, mode=mode)


def check(
    fabric: Fabric, rail: Rail, verdict: Verdict, ws: Sequence[Window], *, post_fec: bool = True
) -> None:
    """Fail the item, naming the counters, when the rail's growth over a window of `ws` fails;
    else not measured where a window could not be read, or, on a lossless rail, lacks the
    hw_counters (its sequence errors could not grow, so no pass may rest on them)."""
    lossless, mode = _mode(fabric, rail)
    pct = fabric.thresholds["discard_pct"].value
    where = f"{rail.node} {rail.netdev} ({rail.label}), {mode}"
    for w in ws:
        if found := judge(w, lossless=lossless, discard_pct_max=pct, post_fec=post_fec):
            text = "; ".join(f"{f.counter} +{f.growth} ({f.why})" for f in found[:3])
            verdict.fail(f"{where}, during {w.label}: {text}", found[0].rule)
    if (unread := next((w for w in ws if w.error is not None), None)) is not None:
        raise NotMeasured(
            f"{rail.node} {rail.netdev} during {unread.label}: {unread.error}", nodes=[rail.node]
        )
    if lossless and (gap := next((w for w in ws if w.partial), None)) is not None:
        raise NotMeasured(
            f"{where}, during {gap.label}: no RDMA hw_counters, so no sequence error can be "
            f"judged; {gap.partial}",
            nodes=[rail.node],
        )


# -- switch legs --------------------------------------------------------------------------------
# Each leg's `print stats` as windows, and the cpu-load sampled while traffic flows (software
# forwarding shows only then). A no-op that says why outside a switch cluster; it never fails a
# measurement. docs/measurement.md.

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


@contextmanager
def watch_switch(fabric: Fabric, label: str) -> Iterator[Callable[[], None] | None]:
    """A window over the traffic inside it: the legs' counters before and after, and a tick
    that samples the cpu-load (call it every CPU_EVERY_S s while the traffic flows). None
    outside a switch cluster or when the switch cannot be read (`SwitchLog.not_watched`)."""
    spec = fabric.cluster.spec.switch
    if fabric.cluster.topology != "switch" or spec is None:
        yield None
        return
    state = switch_phase.state(fabric)
    reads = state.value.reads if state.value is not None else None
    log = switch_log(fabric)
    if reads is None:
        log.not_watched = state.error or "the switch was not read"
        yield None
        return
    legs = list(spec.ports.values())
    start = fabric.transport.clock.now()

    def read() -> Reads:
        t_s = fabric.transport.clock.now()
        try:
            stats = reads.stats(legs)
        except (SwitchError, ParseError) as exc:
            return {leg: f"switch: print stats: {exc}" for leg in legs}
        no = "switch: print stats shows no "
        return {x: Snapshot(t_s, stats[x].counters) if x in stats else no + x for x in legs}

    def tick() -> None:
        at = fabric.transport.clock.now() - start
        try:
            sample = CpuSample(label, at, reads.resource().cpu_load_pct)
        except Exception as exc:  # a sample that fails is kept as such; traffic goes on
            sample = CpuSample(label, at, None, f"switch: /system resource: {exc}")
        log.cpu.append(sample)  # one append: atomic, no lock needed

    (watch := Watch(log, LEGS, tuple(legs), read)).step()
    try:
        yield tick
    except Exception:
        watch.step(label)  # the window of traffic that failed still counts (an interrupt does not)
        raise
    watch.step(label)


@dataclass(frozen=True)
class Growth:
    counter: Counter
    total: int
    by_window: tuple[tuple[str, int], ...]


def unread(w: Window) -> str | None:
    """Why a leg's window tells nothing: not read, or its counters went back (reset, reboot)."""
    if w.went_back and w.error is None:
        return f"switch: {', '.join(w.went_back)} went back (reset or reboot during traffic)"
    return w.error


def leg_growth(windows: Sequence[Window]) -> list[Growth]:
    out = []
    for c in WATCHED:
        parts = tuple((w.label, d) for w in windows if (d := w.growth.get(c.name, 0)) > 0)
        if parts:
            out.append(Growth(c, sum(d for _, d in parts), parts))
    return out


def peak_cpu_pct(fabric: Fabric) -> float | None:
    loads = [s.load_pct for s in switch_log(fabric).cpu if s.load_pct is not None]
    return float(max(loads)) if loads else None
