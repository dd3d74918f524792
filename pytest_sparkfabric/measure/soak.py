"""The heat soak (DOMAIN.md §6): GPUs loaded, every cable saturated both ways, lane counters and
temperatures read on the interval grid from when `nvidia-smi` shows the GPUs busy until the end
or a link drop (loads, servers and clients always ended); then the lanes' judgement (pure)."""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure import counters, flows, nic_temp, rdma
from pytest_sparkfabric.measure.counters import Watch, Window
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.probes import ParseError, perftest
from pytest_sparkfabric.probes.ethtool import build_ethtool_module, parse_ethtool_module
from pytest_sparkfabric.probes.nvidia_smi import build_gpu_query, parse_gpu_query
from pytest_sparkfabric.transport import Background, Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.cluster.thresholds import Threshold, ThresholdName
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.probes.ethtool import EthtoolLink, ModuleEeprom

NAME: PhaseName = "soak"
SOAK_PORT_OFFSET = 30
SOAK_QPS = 4
GPU_BUSY_PCT = 50.0
"""A GPU at or above this utilization counts as loaded."""
LOAD_WAIT_S = 60.0
"""How long (transport clock) the soak waits for the GPU load to show before it starts anyway."""
END_SLACK_S = 0.001
PROGRESS_EVERY_S = 60.0
"""Wall-clock seconds between two progress lines of a running soak (first and last always)."""


@dataclass
class SoakRun:
    """What the soak saw, by node; `traffic*` by flow (its client's Gb/s, None: no result; why
    it failed; why it could not run at all). Peaks are kept: the NIC's hottest hwmon sensor
    (`nic_series`: at each reading; `nic_over`: one past its own limit), the modules' hottest
    non-zero `ethtool -m` reading (passive DACs read 0), their lowest own alarm threshold."""

    started_s: float = 0.0
    """Transport-clock time of the first reading (the rails' windows: the counter log)."""
    duration_s: float = 0.0
    stopped_early: str | None = None
    nic_start_c: dict[str, float] = field(default_factory=dict)
    """The NIC idle, read before any traffic phase of the session."""
    nic_temp_c: dict[str, float] = field(default_factory=dict)
    nic_series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    nic_over: dict[str, str] = field(default_factory=dict)
    module_temp_c: dict[str, float] = field(default_factory=dict)
    module_limit_c: dict[str, float] = field(default_factory=dict)
    module_alarm: dict[str, str] = field(default_factory=dict)
    gpu_temp_c: dict[str, float] = field(default_factory=dict)
    gpu_util_pct: dict[str, float] = field(default_factory=dict)
    gpu_now_c: dict[str, float] = field(default_factory=dict)
    load: dict[str, RunResult | None] = field(default_factory=dict)
    load_error: dict[str, str] = field(default_factory=dict)
    load_planned_s: int = 0
    load_ended_s: dict[str, float] = field(default_factory=dict)
    """Seconds after its start at which the GPU load was first seen ended on its own."""
    traffic: dict[str, float | None] = field(default_factory=dict)
    traffic_error: dict[str, str] = field(default_factory=dict)
    traffic_gap: dict[str, NotMeasured] = field(default_factory=dict)
    idle: dict[str, str] = field(default_factory=dict)
    """Why no soak traffic reached or left the node (its link partners do not answer)."""

    def could_not(self, node: str) -> NotMeasured | None:
        """Why the soak could not load `node` at all (its GPU load or the traffic it sends
        could not run), or None: then what it did is the node's to answer for."""
        gap = could_not_run(self.load.get(node))
        mine = (g for k, g in self.traffic_gap.items() if k.startswith(f"{node}:"))
        return gap or next(mine, None)


def traffic_plan(fabric: Fabric, nodes: Collection[str]) -> dict[str, tuple[Rail, Rail, int]]:
    """Flows (`src->dst`: the rails and the server's port) that saturate every cable both ways
    among `nodes`, at most one server per rail per node port."""
    cluster = fabric.cluster
    if cluster.topology == "switch":
        ring = [n for n in cluster.nodes if n.name in nodes]
        # Each node sends to the next (two nodes: each to the other), so every leg runs both ways.
        pairs = [(a, ring[(i + 1) % len(ring)]) for i, a in enumerate(ring)] if ring[1:] else []
        edges = [(a.rail(a.ports[0], r), b.rail(b.ports[0], r)) for a, b in pairs for r in (0, 1)]
    else:
        links = [x for x in fabric.plan.links if x.a.node in nodes and x.b.node in nodes]
        edges = [(x, y) for link in links for x, y in ((link.a, link.b), (link.b, link.a))]
    base = cluster.spec.bandwidth.base_port + SOAK_PORT_OFFSET
    used: dict[str, int] = {}
    out = {}
    for src, dst in edges:
        used[dst.node] = used.get(dst.node, -1) + 1
        out[f"{src.id}->{dst.id}"] = (src, dst, base + used[dst.node])
    return out


def run(fabric: Fabric) -> SoakRun:
    """The soak (once per session); NotMeasured at once when no two nodes that answer share a
    cable, so no traffic could flow."""
    down = fabric.unreachable()
    if down and not traffic_plan(fabric, fabric.reachable()):
        raise NotMeasured(
            "the heat soak needs traffic between two nodes that answer; " + "; ".join(down.values())
        )
    return fabric.phase(NAME, measure)


def measure(fabric: Fabric) -> SoakRun:
    spec = fabric.cluster.spec.soak
    secs = max(1, math.ceil(spec.duration_s))
    out = SoakRun(load_planned_s=secs)
    live = fabric.reachable()
    plan = traffic_plan(fabric, live)
    busy = {r.node for src, dst, _ in plan.values() for r in (src, dst)}
    gone = "; ".join(fabric.unreachable().values())
    for name in (n for n in live if n not in busy):
        out.idle[name] = f"{name}: no soak traffic, its link partners do not answer: {gone}"
    fabric.progress(
        f"heat soak: {shell.duration(spec.duration_s)}, GPU load on {len(live)} nodes, "
        f"{len(plan)} saturating ib_write_bw flows, a sample every "
        f"{shell.duration(spec.interval_s)}"
    )
    out.nic_start_c.update(nic_temp.baseline(fabric))
    loads: dict[str, Background | None] = {}
    bw = {"qps": SOAK_QPS, "duration_s": secs}
    traffic = []
    for key, (src, dst, port) in plan.items():
        server = perftest.build_ib_write_bw(dst.rdma, None, port=port, **bw)
        client = perftest.build_ib_write_bw(src.rdma, dst.address.ip, port=port, **bw)
        traffic.append(flows.tool_flow(key, port, secs, (dst.node, server), (src.node, client)))

    def note_load_ends() -> None:
        """Record, once, when each GPU load was first seen ended on its own (never blocks)."""
        now = fabric.transport.clock.now() - load_start
        for name, bg in loads.items():
            if bg is not None and name not in out.load_ended_s and _done(bg):
                out.load_ended_s[name] = now

    def sample() -> bool:
        with counters.watch_switch(fabric, "heat soak") as tick:
            _sample_loop(fabric, out, live, note_load_ends, tick)
        return out.stopped_early is not None

    try:
        load_start = fabric.transport.clock.now()
        cmd = shell.fill(spec.gpu_load, {"duration_s": secs})
        for name in live:
            bg = flows.start(fabric.transport, Job(name, cmd, secs + flows.SLACK_S + LOAD_WAIT_S))
            if isinstance(bg, str):
                out.load_error[name] = bg
            loads[name] = None if isinstance(bg, str) else bg
        _wait_for_load(fabric, [n for n, bg in loads.items() if bg is not None])
        note_load_ends()
        for k, fr in flows.run_flows(fabric.transport, traffic, during=sample).items():
            _traffic_result(out, str(k), fr)
    finally:
        out.load = {node: flows.ended(bg) for node, bg in loads.items()}
    return out


def _done(bg: Background) -> bool:
    try:
        return bg.done()
    except Exception:  # a transport that cannot tell: left to the utilization check
        return False


def _wait_for_load(fabric: Fabric, nodes: Sequence[str]) -> None:
    """Until nvidia-smi shows every loaded node's GPUs busy, or LOAD_WAIT_S (transport clock).

    The soak is a test under load: its clock starts once the load is there, whatever the time a
    busy machine or gpu-burn's set-up takes. A node whose GPUs never get busy is left to
    test_soak_load, which reads the utilization of the samples."""
    clock = fabric.transport.clock
    deadline = clock.now() + LOAD_WAIT_S
    pending = list(nodes)
    while pending:
        results = fabric.run_all([Job(n, build_gpu_query(), QUICK_S) for n in pending])
        # Busy, or nvidia-smi cannot tell (then there is nothing to wait for).
        busy = [
            (g := _gpus(r)) is None or any((u or 0) >= GPU_BUSY_PCT for _, u in g) for r in results
        ]
        pending = [n for n, b in zip(pending, busy, strict=True) if not b]
        if not pending or clock.now() >= deadline:
            return
        clock.sleep(1.0)


def _gpus(r: RunResult) -> list[tuple[float | None, float | None]] | None:
    """(temperature, utilization) of each GPU nvidia-smi lists, or None (it could not tell)."""
    try:
        return [(g.temp_c, g.utilization_pct) for g in parse_gpu_query(r.stdout)] if r.ok else None
    except ParseError:
        return None


def _traffic_result(out: SoakRun, key: str, fr: flows.FlowResult) -> None:
    if fr.unmeasured is not None:
        out.traffic_gap[key] = fr.unmeasured
    if fr.error is not None:
        out.traffic_error[key] = fr.error
    if fr.client is None:
        return
    # The bandwidth items' own reading: it keeps perftest's "Failed status" line.
    got = rdma.read_ib_write_bw(fr.client)
    out.traffic[key] = got.value
    if got.error is not None:
        out.traffic_error.setdefault(key, got.error)


def _sample_loop(
    fabric: Fabric, out: SoakRun, nodes: list[str], *after: Callable[[], None] | None
) -> None:
    """Rounds of reads on the interval grid, the last at the end or when a link dropped: the
    rails' counters (each round a window in the counter log), NIC hwmon, GPUs and modules in one
    round trip; `after` each round (the loads' ends, the switch's cpu-load with traffic)."""
    spec, clock, cluster = fabric.cluster.spec.soak, fabric.transport.clock, fabric.cluster
    rails = [r for r in cluster.rails if r.node in nodes]
    # The module sits in the port: one read per cabled port (its first rail's netdev).
    ports = [cluster.node(n).rails_of(p)[0] for n in nodes for p in cluster.node(n).ports]
    counter_jobs = counters.rail_jobs(rails)
    jobs = [*counter_jobs, *nic_temp.jobs(fabric, nodes)]
    jobs += [Job(name, build_gpu_query(), QUICK_S) for name in nodes]
    jobs += [Job(r.node, build_ethtool_module(r.netdev), QUICK_S) for r in ports]
    watch = Watch(counters.rail_log(fabric), NAME, tuple(r.id for r in rails), lambda: {})
    start = out.started_s = clock.now()
    shown: float | None = None  # wall clock: a line a minute, and the last one
    while True:
        elapsed = clock.now() - start
        results = iter(fabric.run_all(jobs))
        read = counters.rail_reads(rails, [next(results) for _ in counter_jobs], start + elapsed)
        grown = watch.step(f"soak {elapsed:.0f} s", read)
        _readings(out, nodes, ports, start + elapsed, results)
        for each in after:
            if each is not None:
                each()
        downs = [
            f"link down on {rail_id} (link_down_events_phy +{n})"
            for rail_id, w in grown.items()
            if (n := w.growth.get("link_down_events_phy", 0))
        ]
        dropped = "; ".join(downs[:2])
        # The last reading is the one taken at the end (a clock reading a hair short of it is
        # the end too: one more sample a moment later would make a window of almost no time).
        last = bool(dropped) or elapsed >= spec.duration_s - END_SLACK_S
        if last:
            fabric.progress(progress_line(fabric, out, elapsed, spec.duration_s))
        elif shown is None or time.monotonic() - shown >= PROGRESS_EVERY_S:
            shown = time.monotonic()
            done = min(1.0, elapsed / spec.duration_s) if spec.duration_s > 0 else None
            fabric.detail(progress_line(fabric, out, elapsed, spec.duration_s), done)
        if dropped:
            out.stopped_early = dropped
            fabric.progress(f"soak stopped at {shell.duration(elapsed)}: {dropped}")
        if last:
            break
        # The next reading on the interval grid (the last exactly at the end): a slow round of
        # reads delays the next one, never the end of the soak.
        now = clock.now() - start
        nxt = min(spec.duration_s, math.floor(now / spec.interval_s + 1) * spec.interval_s)
        clock.sleep(max(0.0, nxt - now))
    out.duration_s = clock.now() - start


def _readings(
    out: SoakRun, nodes: list[str], ports: list[Rail], t_s: float, rs: Iterator[RunResult]
) -> None:
    """The peaks of one round's NIC hwmon, GPU and module reads (in `_sample_loop`'s order)."""
    for name in nodes:
        if sensors := nic_temp.sensors(next(rs)):
            hottest = max(t for _, t, _ in sensors)
            out.nic_temp_c[name] = max(out.nic_temp_c.get(name, -273.0), hottest)
            out.nic_series.setdefault(name, []).append((t_s, hottest))
            for path, c, crit in (x for x in sensors if x[2] is not None and x[1] > x[2]):
                out.nic_over.setdefault(name, f"{path} {c:.1f} C, its own limit {crit:g} C")
    for name in nodes:
        gpus = _gpus(next(rs)) or []
        temps = [t for t, _ in gpus if t is not None]
        utils = [u for _, u in gpus if u is not None]
        if temps:
            out.gpu_temp_c[name] = max([out.gpu_temp_c.get(name, -273.0), *temps])
            out.gpu_now_c[name] = max(temps)
        if utils:
            out.gpu_util_pct[name] = max([out.gpu_util_pct.get(name, 0.0), *utils])
    for rail in ports:
        temp, limit, alarm = module_temp(next(rs)) or (None, None, None)
        node = rail.node
        if temp:  # passive DACs read 0: nothing to judge
            out.module_temp_c[node] = max(out.module_temp_c.get(node, -273.0), temp)
        if limit is not None:
            out.module_limit_c[node] = min(out.module_limit_c.get(node, limit), limit)
        if alarm:
            out.module_alarm.setdefault(node, f"{rail.netdev}: {alarm} On")


def progress_line(fabric: Fabric, out: SoakRun, elapsed: float, total: float) -> str:
    """Where the soak stands: time, hottest NIC and GPU, and the fastest lane now (a healthy
    trickle of a few errors/s is no alarm; the judgement is test_soak_link's)."""
    log = counters.rail_log(fabric)
    rates = [
        (rate, f"{rail.id} lane {lane}")
        for rail in fabric.cluster.rails
        if (ws := log.of(rail.id, NAME))
        for lane, rate in lane_rates(ws[-1]).items()
    ]
    nic = max((s[-1][1] for s in out.nic_series.values()), default=None)
    gpu = max(out.gpu_now_c.values(), default=None)
    done = min(elapsed, total)
    share = f" ({done / total:.0%})" if total > 0 else ""
    parts = [f"soak {shell.duration(done)} of {shell.duration(total)}{share}"]
    parts += [f"hottest NIC {nic:.0f} C"] if nic is not None else []
    parts += [f"hottest GPU {gpu:.0f} C"] if gpu is not None else []
    if rates:
        rate, where = max(rates, key=lambda x: x[0])
        shown = f"{rate:.3g}" if rate < 1000 else f"{rate:,.0f}"
        parts.append(f"fastest lane {shown} errors/s ({where})")
    return ", ".join(parts)


def rail_windows(fabric: Fabric, rail: Rail) -> tuple[Window, ...]:
    run(fabric)
    return counters.rail_log(fabric).of(rail.id, NAME)


def memory_note(command: str) -> str:
    """gpu-burn's `-m N` is N megabytes, `-m N%` N% of free memory (gpu_burn-drv.cpp
    `decodeUSEMEM`): the hint quotes the load's own figure, never a default of ours."""
    m = re.search(r"(?:^|\s)-m\s*(\d+)(%?)", command)
    return f" (gpu-burn reads `-m {m[1]}` as {m[1]} MB and aborts; write `-m {m[1]}%`)" if m else ""


# -- the modules' temperature (DOMAIN.md §6, §9) -------------------------------------------------
# The module's EEPROM (SFF-8636 page 03h) gives its own alarm threshold; passive DACs read 0: not
# judged. The NICs' hwmon sensors: measure/nic_temp.py.

MODULE_LIMIT_FIELD = "Module temperature high alarm threshold"
MODULE_ALARM_PREFIX = "module temperature high"


def module_temp(r: RunResult) -> tuple[float | None, float | None, str | None] | None:
    """What one `ethtool -m` says about temperature: the module's, its own high alarm threshold
    (from its EEPROM) and a high temperature alarm or warning flag it raised; None when it could
    not be read (no root, no module): the module is then not sampled."""
    try:
        module = parse_ethtool_module(r.stdout) if r.ok else None
    except ParseError:
        module = None
    if module is None:
        return None
    limits = (degrees(v) for k, v in module.fields if k == MODULE_LIMIT_FIELD)
    alarm = next((a for a in module.alarms_on if a.lower().startswith(MODULE_ALARM_PREFIX)), None)
    return module.temp_c, next((d for d in limits if d is not None), None), alarm


def degrees(value: str) -> float | None:
    """`60.00 degrees C / 140.00 degrees F` -> 60.0."""
    try:
        return float(value.split("degrees", 1)[0].strip())
    except ValueError:
        return None


# -- lanes (pure) -------------------------------------------------------------------------------
# Per-lane error rates and BER over the soak's windows (DOMAIN.md §6: rates over a window, never
# totals), the lanes in use, and the lane judgement argued in docs/measurement.md.

DEFAULT_SPEED_MBPS = 200_000
DRIVER_LANES: tuple[int, ...] = (0, 1, 2, 3)
"""mlx5 exports rx_err_lane_0_phy .. rx_err_lane_3_phy only (en_stats.c)."""
_LANE = re.compile(r"^rx_err_lane_(\d)_phy$")
CORRECTED = "rx_corrected_bits_phy"
BITS = "rx_bits_phy"


def lanes_in_use(
    *, lanes_reported: int | None, module: ModuleEeprom | None, speed_mbps: int | None
) -> tuple[tuple[int, ...] | None, str]:
    """The lanes that carry the link (None: unknown) and where that came from: ethtool's, else
    the module EEPROM's interface and the speed (DOMAIN.md §9: SFF-8636 QSFP56, CMIS QSFP112)."""
    if lanes_reported:
        n = max(1, min(lanes_reported, len(DRIVER_LANES)))
        return DRIVER_LANES[:n], f"ethtool Lanes: {lanes_reported}"
    ident = (module.identifier or "") if module is not None else ""
    low = ident.lower()
    # SFF-8024 identifiers as ethtool prints them: 0x11 (QSFP28) for SFF-8636 modules, 0x1e
    # (QSFP+ or later with CMIS) and 0x18 (QSFP-DD) for CMIS ones (ethtool sff-common.c).
    if ("cmis" in low or low.startswith(("0x1e", "0x18"))) and speed_mbps in (100_000, 200_000):
        n = speed_mbps // 100_000
        return DRIVER_LANES[:n], f"module EEPROM {ident}: CMIS, {n} x 100G"
    if low.startswith(("0x11", "0x0d")) and speed_mbps == 200_000:
        return DRIVER_LANES, f"module EEPROM {ident}: SFF-8636 at 200G, 4 x 50G"
    why = f"module {ident}" if ident else "no module EEPROM read"
    return None, f"unknown (no ethtool Lanes:, {why}): every lane that moved judged"


def lane_rates(w: Window) -> dict[int, float]:
    """Corrected bits per second of each lane whose counter was read."""
    return dict(sorted((int(m.group(1)), w.rate(k)) for k in w.growth if (m := _LANE.match(k))))


def has_lane_counters(ws: Sequence[Window]) -> bool:
    """Whether the NIC exposed rx_err_lane_*_phy at all (mlx5: the PCAM per-lane capability);
    without them no lane can be judged, which is "not measured", never "clean"."""
    return any(lane_rates(w) for w in ws)


def ber(w: Window, speed_mbps: float | None) -> float | None:
    corrected = w.growth.get(CORRECTED)
    if corrected is None:
        corrected = sum(v for k, v in w.growth.items() if _LANE.match(k))
    total = w.growth.get(BITS, 0) or (speed_mbps or DEFAULT_SPEED_MBPS) * 1e6 * w.seconds
    return corrected / total if total > 0 else None


def max_ber(ws: Sequence[Window], speed_mbps: float | None) -> float | None:
    return max((b for w in ws if (b := ber(w, speed_mbps)) is not None), default=None)


def max_lane_rates(ws: Sequence[Window]) -> dict[int, float]:
    rates = [lane_rates(w) for w in ws]
    return {k: max(r.get(k, 0.0) for r in rates) for k in sorted({k for r in rates for k in r})}


@dataclass(frozen=True, slots=True)
class LaneFinding:
    """A lane above its neighbours or its BER limit: the window it was worst in, and why."""

    lane: int
    level: Literal["fail", "warn"]
    rate_per_s: float
    median_others_per_s: float
    start_s: float
    end_s: float
    lane_ber: float
    grew: float | None
    """Its rate in the hottest window / its rate in the coolest (None: one window only)."""
    why: str


def judge_lanes(
    ws: Sequence[Window],
    temps_c: Sequence[float | None],
    *,
    in_use: tuple[int, ...] | None,
    speed_mbps: float | None,
    limits: Mapping[str, float],
) -> list[LaneFinding]:
    """Each lane's worst window against its neighbours and the FEC limit (`temps_c`: the NIC's at
    each window's end, None: not read; `limits`: the lane_* and ber_max thresholds' values)."""
    floor, ratio_max, ber_max = (
        limits[k] for k in ("lane_floor_per_s", "lane_ratio_max", "ber_max")
    )
    rates = [lane_rates(w) for w in ws]
    moved = sorted({lane for r in rates for lane, v in r.items() if v > 0})
    judged = [lane for lane in moved if in_use is None or lane in in_use]
    per_lane_bits = (speed_mbps or DEFAULT_SPEED_MBPS) * 1e6 / len(in_use or judged or (1,))
    # Coolest to hottest; time order stands in where a temperature was not read.
    order = list(range(len(ws)))
    if None not in temps_c:
        order.sort(key=lambda i: (temps_c[i] or 0.0, i))
    out: list[LaneFinding] = []
    for lane in judged:
        seen = []  # each window's (ratio to the median of the other lanes, that median)
        for r in rates:
            others = [r.get(o, 0.0) for o in judged if o != lane]
            median = statistics.median(others) if others else 0.0
            seen.append((r.get(lane, 0.0) / max(median, floor), median))
        i = max(range(len(ws)), key=lambda k: seen[k][0])  # the worst window, the first of ties
        ratio, median = seen[i]
        top = max(r.get(lane, 0.0) / per_lane_bits for r in rates)
        cool, hot = rates[order[0]].get(lane, 0.0), rates[order[-1]].get(lane, 0.0)
        grew = hot / max(cool, floor) if len(ws) > 1 else None
        level: Literal["fail", "warn"] = "fail"
        if top > ber_max:
            why = f"its own pre-FEC BER reached {top:.3g}, limit {ber_max:g}"
        elif ratio > ratio_max and grew is not None and grew >= limits["lane_heat_growth_min"]:
            why = f"stands alone and grew {grew:,.0f}x as the NIC warmed"
        elif ratio > ratio_max:
            level, why = "warn", "stands alone but stayed flat as the NIC warmed"
        elif ratio > limits["lane_warn_ratio"]:
            level, why = "warn", f"{ratio:,.0f}x its neighbours, below the fail level"
        else:
            continue
        rate, w = rates[i].get(lane, 0.0), ws[i]
        out.append(LaneFinding(lane, level, rate, median, w.start_s, w.end_s, top, grew, why))
    return out


def lanes(
    rail: Rail,
    run: SoakRun,
    ws: Sequence[Window],
    thresholds: Mapping[ThresholdName, Threshold],
    eth: EthtoolLink | None,
    module: ModuleEeprom | None,
) -> tuple[list[LaneFinding], str, float]:
    """The rail's lane findings over these windows given its `ethtool` and module EEPROM (each
    caller reads them its own way), where its lanes in use came from, and its speed: what the
    soak test judges and the report's lane chart flags."""
    # A link the soak dropped reads "Speed: Unknown!" afterwards: its declared speed then.
    speed = (eth.speed_mbps if eth is not None else None) or rail.link_speed_mbps
    used, source = lanes_in_use(
        lanes_reported=eth.lanes if eth is not None else None, module=module, speed_mbps=speed
    )
    # The NIC's hottest sensor at the reading nearest the end of each window (None: never read).
    series = run.nic_series.get(rail.node, [])
    temps = [min(series, key=lambda tc: abs(tc[0] - w.end_s))[1] if series else None for w in ws]
    limits: dict[str, float] = {name: t.value for name, t in thresholds.items()}
    found = judge_lanes(ws, temps, in_use=used, speed_mbps=speed, limits=limits)
    return found, source, float(speed or DEFAULT_SPEED_MBPS)
