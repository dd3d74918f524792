"""The heat soak (DOMAIN.md §6): GPU load on every node and ib_write_bw -D saturating every cable
both ways, while lane counters, NIC (hwmon), module (`ethtool -m`) and GPU temperatures are read
on the interval grid (transport clock) until the end or a link drop. The soak clock starts once
`nvidia-smi` shows the GPUs busy; the load, servers and clients are always ended.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure import rail_counters, switch_counters
from pytest_sparkfabric.measure.counters import Watch, Window
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.measure.flows import (
    LISTEN_WAIT_S,
    SLACK_S,
    ended,
    gap_text,
    start,
    wait_listening,
)
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.measure.soak_math import (
    DEFAULT_SPEED_MBPS,
    LaneFinding,
    LaneLimits,
    judge_lanes,
    lane_rates,
    lanes_in_use,
)
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import build_ethtool_module, parse_ethtool_module
from pytest_sparkfabric.probes.nvidia_smi import build_gpu_query, parse_gpu_query
from pytest_sparkfabric.probes.perftest import (
    build_ib_write_bw_client,
    build_ib_write_bw_server,
    parse_ib_write_bw,
)
from pytest_sparkfabric.probes.sysfs import (
    build_read_globs,
    hwmon_glob,
    hwmon_limits_c,
    hwmon_temps_c,
    parse_read_files,
)
from pytest_sparkfabric.transport import Background, Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.measure.engine import Fabric

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


@dataclass(frozen=True, slots=True)
class Traffic:
    src: Rail
    dst: Rail
    port: int

    @property
    def where(self) -> str:
        return f"{self.src.id}->{self.dst.id}"


@dataclass
class SoakRun:
    started_s: float = 0.0
    """Transport-clock time of the first reading (the rails' windows: the counter log)."""
    nic_temp_c: dict[str, float] = field(default_factory=dict)
    """Node -> the highest NIC hwmon temperature seen."""
    nic_series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    """Node -> (transport-clock time, hottest NIC sensor) at each reading."""
    nic_over: dict[str, str] = field(default_factory=dict)
    """Node -> a NIC sensor that passed its own limit ("<sensor> <temp> C, limit <crit> C")."""
    nic_start_c: dict[str, float] = field(default_factory=dict)
    """Node -> the NIC's idle temperature, read before any traffic phase of the session."""
    module_temp_c: dict[str, float] = field(default_factory=dict)
    """Node -> the highest non-zero module temperature `ethtool -m` read (passive DACs read 0)."""
    module_limit_c: dict[str, float] = field(default_factory=dict)
    """Node -> the lowest "Module temperature high alarm threshold" its modules' EEPROMs give."""
    module_alarm: dict[str, str] = field(default_factory=dict)
    """Node -> a module temperature alarm flag the EEPROM raised ("<netdev>: <flag>")."""
    gpu_temp_c: dict[str, float] = field(default_factory=dict)
    gpu_util_pct: dict[str, float] = field(default_factory=dict)
    now_c: dict[str, float] = field(default_factory=dict)
    """"nic:<node>" / "gpu:<node>" -> the latest reading, for progress lines."""
    load: dict[str, RunResult | None] = field(default_factory=dict)
    load_error: dict[str, str] = field(default_factory=dict)
    load_planned_s: int = 0
    """Seconds the GPU load was asked to run ({duration_s})."""
    load_ended_s: dict[str, float] = field(default_factory=dict)
    """Node -> seconds after its start at which the GPU load was first seen ended on its own."""
    load_started_at: float = 0.0
    traffic: dict[str, float | None] = field(default_factory=dict)
    """Flow -> Gb/s its client reported (None: no result)."""
    traffic_error: dict[str, str] = field(default_factory=dict)
    traffic_gap: dict[str, NotMeasured] = field(default_factory=dict)
    """Flow -> why it could not run at all (ib_write_bw missing, a node lost)."""
    idle: dict[str, str] = field(default_factory=dict)
    """Node -> why no soak traffic reached or left it (its link partners do not answer)."""
    stopped_early: str | None = None
    duration_s: float = 0.0

    def could_not(self, node: str) -> NotMeasured | None:
        """Why the soak could not load `node` at all (its GPU load or the traffic it sends
        could not run), or None: then what it did is the node's to answer for."""
        gap = could_not_run(self.load.get(node))
        mine = (g for k, g in self.traffic_gap.items() if k.startswith(f"{node}:"))
        return gap or next(mine, None)


def traffic_plan(fabric: Fabric, nodes: Collection[str] | None = None) -> list[Traffic]:
    """Flows that saturate every cable both ways, at most one server per rail per node port;
    only among `nodes` (default: all)."""
    cluster = fabric.cluster
    keep = set(nodes) if nodes is not None else {n.name for n in cluster.nodes}
    base = cluster.spec.bandwidth.base_port + SOAK_PORT_OFFSET
    if cluster.topology == "switch":
        ring = [n for n in cluster.nodes if n.name in keep]
        # Each node sends to the next (two nodes: each to the other), so every leg runs both ways.
        pairs = (
            [(a, ring[(i + 1) % len(ring)]) for i, a in enumerate(ring)] if len(ring) > 1 else []
        )
        edges = [(a.rail(a.ports[0], r), b.rail(b.ports[0], r)) for a, b in pairs for r in (0, 1)]
    else:
        links = [x for x in fabric.plan.links if x.a.node in keep and x.b.node in keep]
        edges = [(x, y) for link in links for x, y in ((link.a, link.b), (link.b, link.a))]
    used: dict[str, int] = {}
    out = []
    for src, dst in edges:
        k = used.get(dst.node, 0)
        used[dst.node] = k + 1
        out.append(Traffic(src, dst, base + k))
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


def _start(fabric: Fabric, job: Job, errors: dict[str, str], key: str) -> Background | None:
    bg = start(fabric.transport, job)
    if isinstance(bg, str):
        errors[key] = bg
        return None
    return bg


def _wait(bg: Background | None) -> RunResult | None:
    if bg is None:
        return None
    try:
        return bg.wait()
    except Exception:
        return ended(bg)


def measure(fabric: Fabric) -> SoakRun:
    cluster = fabric.cluster
    spec = cluster.spec.soak
    out = SoakRun()
    secs = max(1, math.ceil(spec.duration_s))
    live = fabric.reachable()
    flows = traffic_plan(fabric, live)
    busy = {f.src.node for f in flows} | {f.dst.node for f in flows}
    gone = "; ".join(fabric.unreachable().values())
    for name in (n for n in live if n not in busy):
        out.idle[name] = f"{name}: no soak traffic, its link partners do not answer: {gone}"
    fabric.progress(
        f"heat soak: {shell.duration(spec.duration_s)}, GPU load on {len(live)} nodes, "
        f"{len(flows)} saturating ib_write_bw flows, a sample every "
        f"{shell.duration(spec.interval_s)}"
    )
    loads: dict[str, Background | None] = {}
    servers: dict[str, Background | None] = {}
    clients: dict[str, Background | None] = {}
    out.load_planned_s = secs
    out.nic_start_c.update(baseline(fabric))
    try:
        out.load_started_at = fabric.transport.clock.now()
        for name in live:
            cmd = shell.fill(spec.gpu_load, {"duration_s": secs})
            job = Job(name, cmd, secs + SLACK_S + LOAD_WAIT_S)
            loads[name] = _start(fabric, job, out.load_error, name)
        _wait_for_load(fabric, [n for n, bg in loads.items() if bg is not None])
        _note_load_ends(fabric, out, loads)
        for f in flows:
            server = build_ib_write_bw_server(
                f.dst.rdma, qps=SOAK_QPS, duration_s=secs, port=f.port
            )
            job = Job(f.dst.node, server, secs + SLACK_S + LISTEN_WAIT_S)
            servers[f.where] = _start(fabric, job, out.traffic_error, f.where)
        targets = [(f.dst.node, f.port) for f in flows]
        started = {(f.dst.node, f.port): bg for f in flows if (bg := servers[f.where])}
        why = wait_listening(fabric.transport, targets, servers=started)
        for f in flows:
            reason = why.get((f.dst.node, f.port))
            if reason is not None:
                out.traffic_error.setdefault(f.where, gap_text(reason))
                if isinstance(reason, NotMeasured):
                    out.traffic_gap.setdefault(f.where, reason)
                continue
            client = build_ib_write_bw_client(
                f.src.rdma, f.dst.address.ip, qps=SOAK_QPS, duration_s=secs, port=f.port
            )
            clients[f.where] = _start(
                fabric, Job(f.src.node, client, secs + SLACK_S), out.traffic_error, f.where
            )
        with switch_counters.watch(fabric, "heat soak") as tick:
            _sample_loop(fabric, out, live, loads, tick)
        if out.stopped_early is None:
            # The clients end by their own -D; their last words carry the average rate.
            # Dropped only once waited for: a Ctrl-C mid-wait still stops the rest in `finally`.
            for key in list(clients):
                _traffic_result(out, key, _wait(clients[key]))
                del clients[key]
    finally:
        for key, bg in clients.items():
            _traffic_result(out, key, ended(bg))
        for key, bg in servers.items():
            if (gap := could_not_run(ended(bg))) is not None:
                out.traffic_gap.setdefault(key, gap)
        for node, bg in loads.items():
            out.load[node] = ended(bg)
    return out


def _note_load_ends(fabric: Fabric, out: SoakRun, loads: dict[str, Background | None]) -> None:
    """Record, once, when each GPU load was first seen ended on its own (never blocks)."""
    now = fabric.transport.clock.now() - out.load_started_at
    for name, bg in loads.items():
        if bg is None or name in out.load_ended_s:
            continue
        try:
            ended = bg.done()
        except Exception:  # a transport that cannot tell: left to the utilization check
            ended = False
        if ended:
            out.load_ended_s[name] = now


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
        pending = [n for n, r in zip(pending, results, strict=True) if not _gpu_busy(r)]
        if not pending or clock.now() >= deadline:
            return
        clock.sleep(1.0)


def _gpu_busy(r: RunResult) -> bool:
    """Busy, or nvidia-smi cannot tell (then there is nothing to wait for)."""
    if not r.ok:
        return True
    try:
        gpus = parse_gpu_query(r.stdout)
    except ParseError:
        return True
    return any((g.utilization_pct or 0.0) >= GPU_BUSY_PCT for g in gpus)


def _traffic_result(out: SoakRun, key: str, r: RunResult | None) -> None:
    if r is None:
        out.traffic.setdefault(key, None)
        return
    if (gap := could_not_run(r)) is not None:
        out.traffic_gap.setdefault(key, gap)
    try:
        out.traffic[key] = parse_ib_write_bw(r.stdout).bw_avg_gbps
    except ParseError as exc:
        out.traffic[key] = None
        out.traffic_error.setdefault(key, f"{r.node}: {exc}")


def _sample_loop(
    fabric: Fabric,
    out: SoakRun,
    nodes: Sequence[str],
    loads: dict[str, Background | None],
    tick: Callable[[], None] | None,
) -> None:
    spec = fabric.cluster.spec.soak
    clock = fabric.transport.clock
    start = out.started_s = clock.now()
    rails = [r for r in fabric.cluster.rails if r.node in nodes]
    # Each round's reads run with the temperatures' (one round trip): `_sample` hands them in.
    watch = Watch(rail_counters.log(fabric), NAME, tuple(r.id for r in rails), lambda: {})
    shown: float | None = None  # wall clock: a line a minute, and the last one
    while True:
        elapsed = clock.now() - start
        dropped = _sample(fabric, out, elapsed, nodes, watch)
        _note_load_ends(fabric, out, loads)
        if tick is not None:
            tick()  # the switch's cpu-load with the soak's traffic flowing
        # The last reading is the one taken at the end (a clock reading a hair short of it is
        # the end too: one more sample a moment later would make a window of almost no time).
        last = dropped is not None or elapsed >= spec.duration_s - END_SLACK_S
        if last:
            fabric.progress(progress_line(fabric, out, elapsed, spec.duration_s))
        elif shown is None or time.monotonic() - shown >= PROGRESS_EVERY_S:
            shown = time.monotonic()
            fabric.detail(progress_line(fabric, out, elapsed, spec.duration_s))
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


def _sample(
    fabric: Fabric, out: SoakRun, now: float, nodes: Sequence[str], watch: Watch
) -> str | None:
    """One round of reads at `now` seconds into the soak (the rails' counters: one window in
    the counter log since the last round); returns why the soak must stop (a link dropped)."""
    cluster = fabric.cluster
    rails = [r for r in cluster.rails if r.node in nodes]
    # The module sits in the port: one read per cabled port (its first rail's netdev).
    ports = [cluster.node(n).rails_of(p)[0] for n in nodes for p in cluster.node(n).ports]
    counter_jobs = rail_counters.jobs(rails)
    results = iter(
        fabric.run_all(
            [
                *counter_jobs,
                *hwmon_jobs(fabric, nodes),
                *(Job(name, build_gpu_query(), QUICK_S) for name in nodes),
                *(Job(r.node, build_ethtool_module(r.netdev), QUICK_S) for r in ports),
            ]
        )
    )
    t_s = out.started_s + now
    read = rail_counters.parse(rails, [next(results) for _ in counter_jobs], t_s)
    grown = watch.step(f"soak {now:.0f} s", read) if watch.last else {}
    if not watch.last:
        watch.start(read)
    for name in nodes:
        _nic_reading(out, name, t_s, nic_sensors(next(results)))
    for name in nodes:
        _gpu_reading(out, name, next(results))
    for rail in ports:
        _module_reading(out, rail, module_temp(next(results)))
    dropped = [
        f"link down on {rail_id} (link_down_events_phy +{n})"
        for rail_id, w in grown.items()
        if (n := w.growth.get("link_down_events_phy", 0))
    ]
    return "; ".join(dropped[:2]) if dropped else None


def _nic_reading(out: SoakRun, name: str, t_s: float, sensors: list[Sensor]) -> None:
    if not sensors:
        return
    hottest = max(x.temp_c for x in sensors)
    out.nic_temp_c[name] = max(out.nic_temp_c.get(name, -273.0), hottest)
    out.nic_series.setdefault(name, []).append((t_s, hottest))
    out.now_c[f"nic:{name}"] = hottest
    over = next((x for x in sensors if x.limit_c is not None and x.temp_c > x.limit_c), None)
    if over is not None:
        out.nic_over.setdefault(name, over.describe())


def _gpu_reading(out: SoakRun, name: str, r: RunResult) -> None:
    try:
        gpus = parse_gpu_query(r.stdout) if r.ok else []
    except ParseError:
        return
    temps = [g.temp_c for g in gpus if g.temp_c is not None]
    utils = [g.utilization_pct for g in gpus if g.utilization_pct is not None]
    if temps:
        out.gpu_temp_c[name] = max([out.gpu_temp_c.get(name, -273.0), *temps])
        out.now_c[f"gpu:{name}"] = max(temps)
    if utils:
        out.gpu_util_pct[name] = max([out.gpu_util_pct.get(name, 0.0), *utils])


def _module_reading(out: SoakRun, rail: Rail, reading: ModuleTemp | None) -> None:
    if reading is None:
        return
    node = rail.node
    if reading.temp_c:  # passive DACs read 0: nothing to judge
        out.module_temp_c[node] = max(out.module_temp_c.get(node, -273.0), reading.temp_c)
    if reading.limit_c is not None:
        out.module_limit_c[node] = min(
            out.module_limit_c.get(node, reading.limit_c), reading.limit_c
        )
    if reading.alarm:
        out.module_alarm.setdefault(node, f"{rail.netdev}: {reading.alarm} On")


def progress_line(fabric: Fabric, out: SoakRun, elapsed: float, total: float) -> str:
    """Where the soak stands: time, hottest NIC and GPU, and the fastest lane now (a healthy
    trickle of a few errors/s is no alarm; the judgement is test_soak_link's)."""
    worst: tuple[float, str] | None = None
    log = rail_counters.log(fabric)
    for rail in fabric.cluster.rails:
        ws = log.of(rail.id, NAME)
        for lane, rate in (lane_rates(ws[-1]) if ws else {}).items():
            if worst is None or rate > worst[0]:
                worst = (rate, f"{rail.id} lane {lane}")
    nic = max((v for k, v in out.now_c.items() if k.startswith("nic:")), default=None)
    gpu = max((v for k, v in out.now_c.items() if k.startswith("gpu:")), default=None)
    done = min(elapsed, total)
    share = f" ({done / total:.0%})" if total > 0 else ""
    parts = [f"soak {shell.duration(done)} of {shell.duration(total)}{share}"]
    if nic is not None:
        parts.append(f"hottest NIC {nic:.0f} C")
    if gpu is not None:
        parts.append(f"hottest GPU {gpu:.0f} C")
    if worst is not None:
        rate, where = worst
        shown = f"{rate:.3g}" if rate < 1000 else f"{rate:,.0f}"
        parts.append(f"fastest lane {shown} errors/s ({where})")
    return ", ".join(parts)


def rail_windows(fabric: Fabric, rail: Rail) -> tuple[Window, ...]:
    """The rail's counter windows over the soak (running it first)."""
    run(fabric)
    return rail_counters.log(fabric).of(rail.id, NAME)


def nic_temps_at(run: SoakRun, node: str, ws: Sequence[Window]) -> list[float | None]:
    """The NIC's hottest sensor at the reading nearest the end of each window (None: never
    read)."""
    series = run.nic_series.get(node, [])
    if not series:
        return [None] * len(ws)
    return [min(series, key=lambda tc: abs(tc[0] - w.end_s))[1] for w in ws]


def lanes(
    fabric: Fabric, rail: Rail, run: SoakRun, ws: Sequence[Window]
) -> tuple[list[LaneFinding], str, float]:
    """The rail's lane findings over these windows, where its lanes in use came from, and its
    speed: what the soak test judges and the report's lane chart flags."""
    from pytest_sparkfabric.measure import links

    eth = links.ethtool(fabric, rail).value
    # A link the soak dropped reads "Speed: Unknown!" afterwards: its declared speed then.
    speed = (eth.speed_mbps if eth is not None else None) or rail.link_speed_mbps
    module = links.module(fabric, fabric.cluster.node(rail.node), rail.port).value
    used = lanes_in_use(
        lanes_reported=eth.lanes if eth is not None else None, module=module, speed_mbps=speed
    )
    found = judge_lanes(
        ws,
        nic_temps_at(run, rail.node, ws),
        in_use=used.lanes,
        speed_mbps=speed,
        limits=LaneLimits.of(fabric.thresholds),
    )
    return found, used.source, float(speed or DEFAULT_SPEED_MBPS)


def memory_note(command: str) -> str:
    """gpu-burn's `-m N` is N megabytes, `-m N%` N% of free memory (gpu_burn-drv.cpp
    `decodeUSEMEM`): the hint quotes the load's own figure, never a default of ours."""
    m = re.search(r"(?:^|\s)-m\s*(\d+)(%?)", command)
    if m is None:
        return ""
    n = m.group(1)
    return f" (gpu-burn reads `-m {n}` as {n} MB and aborts; write `-m {n}%`)"


# -- temperatures (DOMAIN.md §6, §9) ------------------------------------------------------------
# mlx5 hwmon (Linux >= 6.6): each sensor judged against its own temp*_crit/_max. The module's
# EEPROM (SFF-8636 page 03h) gives its own alarm threshold; passive DACs read 0: not judged.

BASELINE: PhaseName = "nic_baseline"
MODULE_LIMIT_FIELD = "Module temperature high alarm threshold"
MODULE_ALARM_PREFIX = "module temperature high"


@dataclass(frozen=True, slots=True)
class ModuleTemp:
    temp_c: float | None
    limit_c: float | None
    """The module's own high alarm threshold, when its EEPROM has one."""
    alarm: str | None
    """A high temperature alarm or warning flag the module raised."""


@dataclass(frozen=True, slots=True)
class Sensor:
    path: str
    temp_c: float
    limit_c: float | None
    """The sensor's own temp*_crit, else temp*_max; None when it has neither."""

    def describe(self) -> str:
        limit = f"{self.limit_c:g} C" if self.limit_c is not None else "none"
        return f"{self.path} {self.temp_c:.1f} C, its own limit {limit}"


def nic_sensors(r: RunResult) -> list[Sensor]:
    """Every NIC hwmon sensor one read of `hwmon_glob` gave (none: not readable)."""
    if not r.ok:
        return []
    files = parse_read_files(r.stdout)
    limits = hwmon_limits_c(files)
    return [Sensor(p, t, limits.get(p)) for p, t in sorted(hwmon_temps_c(files).items())]


def hwmon_jobs(fabric: Fabric, nodes: Sequence[str]) -> list[Job]:
    """One read of each node's NIC hwmon sensors. One ConnectX-7 per box: the hwmon of its
    first fabric netdev is the NIC's temperature."""
    netdev = {n: fabric.cluster.node(n).rails[0].netdev for n in nodes}
    return [Job(n, build_read_globs([hwmon_glob(netdev[n])]), QUICK_S) for n in nodes]


def _nic_baseline(fabric: Fabric) -> dict[str, float]:
    """Node -> its NIC's hottest hwmon reading now (nodes without one are left out)."""
    nodes = fabric.reachable()
    jobs = hwmon_jobs(fabric, nodes)
    out: dict[str, float] = {}
    for name, r in zip(nodes, fabric.run_all(jobs), strict=True):
        temps = [x.temp_c for x in nic_sensors(r)]
        if temps:
            out[name] = max(temps)
    return out


def baseline(fabric: Fabric) -> dict[str, float]:
    """The NICs' idle temperatures: read once, by the first traffic phase before it starts."""
    return fabric.phase(BASELINE, _nic_baseline)


def module_temp(r: RunResult) -> ModuleTemp | None:
    """What one `ethtool -m` says about temperature; None when it could not be read (no root,
    no module): the module is then not sampled."""
    if not r.ok:
        return None
    try:
        module = parse_ethtool_module(r.stdout)
    except ParseError:
        return None
    limit = next(
        (d for k, v in module.fields if k == MODULE_LIMIT_FIELD and (d := degrees(v)) is not None),
        None,
    )
    alarm = next((a for a in module.alarms_on if a.lower().startswith(MODULE_ALARM_PREFIX)), None)
    return ModuleTemp(module.temp_c, limit, alarm)


def degrees(value: str) -> float | None:
    """`60.00 degrees C / 140.00 degrees F` -> 60.0."""
    head = value.split("degrees", 1)[0].strip()
    try:
        return float(head)
    except ValueError:
        return None
