"""Bandwidth: the runner every client/server tool shares; ib_write_bw, the NIC loopback self-test
first (a throttled NIC shows there, not as a slow cable), then node pairs both rails at once in
`bwplan` rounds; ib_write_lat per pair; iperf3 (TCP) in the same rounds. docs/measurement.md."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster.plan import Link
from pytest_sparkfabric.measure import bwplan, counters, nic_temp
from pytest_sparkfabric.measure import schedule as sched
from pytest_sparkfabric.measure.engine import PhaseName, parsed, result_error
from pytest_sparkfabric.measure.flows import LISTEN_WAIT_S, Flow, FlowResult, run_flows, tool_flow
from pytest_sparkfabric.measure.localize import Localization, Outcome, localize
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.probes import ParseError, iperf3
from pytest_sparkfabric.probes import perftest as pt
from pytest_sparkfabric.shell import duration, plural
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.cluster.plan import NodePair
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "rdma"
LOOPBACK: PhaseName = "loopback"
LATENCY: PhaseName = "rdma_lat"
TCP: PhaseName = "tcp"
LAT_PORT_OFFSET = 30
LAT_DEADLINE_S = 30.0
"""1000 round trips of ~2 us and perftest's set-up: seconds, even on a slow path."""


@dataclass(frozen=True, slots=True)
class BwResult:
    """One client run of a bandwidth tool: from `src` to `dst` over `link` (for a loopback, a
    link of the rail to itself)."""

    link: Link
    src: Rail
    dst: Rail
    gbps: float | None
    error: str | None
    round: int
    command: str = ""
    seconds: float | None = None
    """How long the client ran (transport clock): the tool's duration plus its set-up."""
    unmeasured: NotMeasured | None = None
    """Why it could not run at all (a tool missing, a node lost): not the fabric's fault."""

    @property
    def loopback(self) -> bool:
        return self.src == self.dst

    @property
    def where(self) -> str:
        return self.src.id if self.loopback else f"{self.src.id}->{self.dst.id}"

    @property
    def label(self) -> str:
        return f"{self.src.node}->{self.dst.node} {self.src.netdev} (rail{self.link.rail})"

    def measured(self) -> Measured[float]:
        if self.unmeasured is not None:
            return Measured.not_measured(self.unmeasured)
        if self.gbps is None:
            return Measured.failed(self.error or f"{self.where}: no result")
        return Measured.of(self.gbps)


@dataclass(frozen=True, slots=True)
class Tool:
    """A bandwidth tool: its server and client for a test on a port, and how its output reads."""

    name: str
    flow: Callable[[Fabric, bwplan.RailTest, int], Flow]
    read: Callable[[RunResult], Measured[float]]
    base_offset: int
    """Its ports above `bandwidth.base_port`, apart from the other tools' (a late server)."""


@dataclass(frozen=True)
class Loopbacks:
    results: dict[str, BwResult]
    rounds: int


@dataclass(frozen=True)
class RdmaRun:
    """A bandwidth phase over the pair schedule: ib_write_bw (`rdma`, the only one localized
    and re-tested) or iperf3 (`tcp`)."""

    schedule: sched.Schedule
    links: dict[str, tuple[BwResult, ...]]
    """Measured rail link id -> its results, one per measured direction, a->b first."""
    round_of: dict[str, int]
    """Measured node pair id -> its first round (1-based)."""
    elapsed_s: float
    """Transport-clock seconds the pair rounds (and re-tests) took."""
    localization: Localization | None = None
    retests: tuple[BwResult, ...] = ()
    """Third-partner tests run to confirm a suspect (not items of their own)."""

    def directed(self) -> dict[tuple[str, str, int], BwResult]:
        """Every measured direction: (sender, receiver, rail) -> its result."""
        every = (*(r for rs in self.links.values() for r in rs), *self.retests)
        return {(r.src.node, r.dst.node, r.src.index): r for r in every}

    def directions(self, pair: NodePair) -> tuple[tuple[BwResult, ...], ...]:
        """Each measured direction of `pair`, a->b first: its rails, measured at the same time."""
        return tuple(zip(*(self.links.get(link.id, ()) for link in pair.links), strict=False))


# -- the runner ---------------------------------------------------------------------------------


def _reading(tool: Tool, fr: FlowResult) -> Measured[float]:
    if fr.error or fr.client is None:
        return Measured.failed(fr.error or "the client did not run")
    err = result_error(fr.client, tool.name)
    return Measured.failed(err) if err else tool.read(fr.client)


def run_tests(
    fabric: Fabric, tool: Tool, tests: Sequence[bwplan.RailTest], watch: str = ""
) -> dict[tuple[str, str], BwResult]:
    """One round of tests at once; `watch`: the label of the switch window over it (none if
    empty). A test with a node that does not answer is not measured, and runs nothing."""
    out: dict[tuple[str, str], BwResult] = {}
    live: list[bwplan.RailTest] = []
    for t in tests:
        if why := fabric.gone((t.src.node, t.dst.node)):
            out[t.key] = BwResult(t.link, t.src, t.dst, None, why.reason, t.round, unmeasured=why)
        else:
            live.append(t)
    if not live:
        return out
    base = fabric.cluster.spec.bandwidth.base_port + tool.base_offset
    flows = [tool.flow(fabric, t, bwplan.port(base, t)) for t in live]
    with counters.watch_switch(fabric, watch) if watch else nullcontext() as tick:
        done = run_flows(fabric.transport, flows, tick=tick, every_s=counters.CPU_EVERY_S)
    for t, flow in zip(live, flows, strict=True):
        fr = done[t.key]
        got = _reading(tool, fr)
        seconds = fr.client.duration_s if fr.client is not None else None
        out[t.key] = BwResult(
            t.link, t.src, t.dst, got.value, got.error, t.round, flow.client.command, seconds,
            fr.unmeasured,
        )  # fmt: skip
    return out


def run_schedule(fabric: Fabric, tool: Tool, what: str, how: str, plan: sched.Schedule) -> RdmaRun:
    """Every round of `plan` with `tool`. `how` ends the start line, which (like each round's
    line) counts the tests with both nodes answering."""
    down = fabric.unreachable()
    live = [
        (k, ts)
        for k, r in enumerate(plan.rounds, 1)
        if (ts := [t for t in r if t.src not in down and t.dst not in down])
    ]
    lines = {
        k: (f"{what} round {n}/{len(live)}: " + ", ".join(t.id for t in ts), (n - 1) / len(live))
        for n, (k, ts) in enumerate(live, 1)
    }
    pairs = {frozenset((t.src, t.dst)) for _, ts in live for t in ts}
    if not pairs:
        fabric.progress(f"{what} bandwidth ({plan.kind}): no node pair answers at both ends")
    else:
        both = (
            " (both directions at once, each its own test)" if plan.mode == "bidirectional" else ""
        )
        fabric.progress(
            f"{what} bandwidth ({plan.kind}): {plural(len(pairs), 'node pair')} in "
            f"{plural(len(live), 'round')} of {duration(fabric.cluster.spec.bandwidth.duration_s)}"
            f"{both}{how}"
        )
    start = fabric.transport.clock.now()
    # Counters only where traffic runs: a rail whose every partner is down proves nothing.
    busy = {n for p in pairs for n in p}
    rails = [r for r in fabric.cluster.rails if r.node in busy]
    watch = counters.watch_rails(fabric, what.lower(), rails)
    results: dict[tuple[str, str], BwResult] = {}
    for k, tests in enumerate(bwplan.rail_tests(fabric.plan, plan), 1):
        line, done = lines.get(k, (None, None))
        if line:
            fabric.detail(line, done)
        results.update(run_tests(fabric, tool, tests, f"{what} round {k}"))
        watch.step(line or f"{what} round {k}")
    links: dict[str, tuple[BwResult, ...]] = {}
    round_of: dict[str, int] = {}
    for pair in bwplan.measured_pairs(fabric.plan, plan):
        for link in pair.links:
            got = tuple(results[k] for k in ((link.id, "a->b"), (link.id, "b->a")) if k in results)
            links[link.id] = got
            round_of.setdefault(pair.id, min(r.round for r in got))
    return RdmaRun(plan, links, round_of, fabric.transport.clock.now() - start)


# -- ib_write_bw --------------------------------------------------------------------------------


def read_ib_write_bw(r: RunResult) -> Measured[float]:
    try:
        return Measured.of(pt.parse_ib_write_bw(r.stdout).bw_avg_gbps)
    except ParseError as exc:
        # perftest says on stderr why the run stopped: a completion error (retries exhausted),
        # or why it gave up (`Couldn't connect to <ip>:<port>`, ...).
        failed = [ln.strip() for ln in r.stderr.splitlines() if "Failed status" in ln]
        if failed and r.rc != 0:
            return Measured.failed(f"{r.node}: {exc}; ib_write_bw rc {r.rc}: {failed[0]}")
        said = " / ".join(line.strip() for line in r.stderr.splitlines() if line.strip())
        return Measured.failed(f"{r.node}: {exc}" + (f"; stderr: {said[:300]}" if said else ""))


def _flow(fabric: Fabric, t: bwplan.RailTest, port: int) -> Flow:
    bw = fabric.cluster.spec.bandwidth
    dur = bw.duration_s
    server = pt.build_ib_write_bw(t.dst.rdma, qps=bw.qps, duration_s=dur, port=port)
    client = pt.build_ib_write_bw(
        t.src.rdma, t.dst.address.ip, qps=bw.qps, duration_s=dur, port=port
    )
    return tool_flow(t.key, port, dur, (t.dst.node, server), (t.src.node, client))


IB_WRITE_BW = Tool("ib_write_bw", _flow, read_ib_write_bw, base_offset=0)


# -- loopback ---------------------------------------------------------------------------------


def loopbacks(fabric: Fabric) -> Loopbacks:
    return fabric.phase(LOOPBACK, measure_loopbacks)


def loopback(fabric: Fabric, rail: Rail) -> BwResult:
    return loopbacks(fabric).results[rail.id]


def measure_loopbacks(fabric: Fabric) -> Loopbacks:
    nic_temp.baseline(fabric)  # the NICs idle, before any traffic of the session
    cluster = fabric.cluster
    slots = max(len(n.rails) for n in cluster.nodes)
    down = fabric.unreachable()
    results = {
        r.id: BwResult(Link(r, r, r.index), r, r, None, down[r.node], 0, unmeasured=why)
        for r in cluster.rails
        if (why := fabric.gone([r.node]))
    }
    live = [n for n in cluster.nodes if n.name not in down]
    if not live:
        return Loopbacks(results, 0)
    fabric.progress(
        f"NIC self-test: loopback ib_write_bw on every rail, {plural(slots, 'round')} of "
        f"{duration(cluster.spec.bandwidth.duration_s)} (every node at once, one rail per node "
        "per round)"
    )
    for k in range(slots):
        rails = [n.rails[k] for n in live if k < len(n.rails)]
        fabric.detail(
            f"loopback round {k + 1}/{slots}: " + ", ".join(r.id for r in rails), k / slots
        )
        tests = [bwplan.RailTest(Link(r, r, r.index), "a->b", r, r, k + 1, k) for r in rails]
        results.update({r.src.id: r for r in run_tests(fabric, IB_WRITE_BW, tests).values()})
    return Loopbacks(results, slots)


# -- node pairs -------------------------------------------------------------------------------


def schedule(fabric: Fabric) -> sched.Schedule:
    """The schedule of cluster.yaml's `bandwidth:` over every node (measure/bwplan.py)."""
    return bwplan.build(fabric.cluster, fabric.plan)


def pair_runs(fabric: Fabric) -> RdmaRun:
    return fabric.phase(NAME, measure)


def measure(fabric: Fabric) -> RdmaRun:
    loopbacks(fabric)  # the NIC self-test always comes first
    plan = schedule(fabric)
    if not plan.rounds:
        return RdmaRun(plan, {}, {}, 0.0)
    at_once = "(no node in two tests at once)" if plan.node_disjoint else "(every node at once)"
    how = f", both rails at once {at_once}"
    run = run_schedule(fabric, IB_WRITE_BW, "RDMA", how, plan)
    if plan.kind == "stress":
        return run  # overlapping tests by design: not evidence for the rule (localize.py)
    # Suspects from the outcomes; behind a switch a node that fails with both its partners is
    # re-tested against a third (`bandwidth.confirm`) before it is named.
    cables = bwplan.cables_of(fabric.plan)
    measured = [r for results in run.links.values() for r in results]
    found = localize(outcomes(fabric, measured), cables)
    extra = found.retests() if fabric.cluster.spec.bandwidth.confirm else None
    if extra is None or not extra.rounds:
        return replace(run, localization=found)
    fabric.progress(
        f"RDMA re-test of {plural(len(extra.transfers), 'direction')} against a third "
        f"partner, {plural(len(extra.rounds), 'round')}: " + ", ".join(extra.lines())
    )
    start = fabric.transport.clock.now()
    retested: list[BwResult] = []
    for tests in bwplan.rail_tests(fabric.plan, extra, len(plan.rounds) + 1):
        retested += run_tests(fabric, IB_WRITE_BW, tests).values()
    return replace(
        run,
        localization=localize(outcomes(fabric, [*measured, *retested]), cables),
        retests=tuple(retested),
        elapsed_s=run.elapsed_s + fabric.transport.clock.now() - start,
    )


def outcomes(fabric: Fabric, results: Iterable[BwResult]) -> list[Outcome]:
    """Pass/fail per measured direction and rail against `rail_rdma_gbps` (no figure: fail)."""
    return [
        Outcome(
            r.src.node,
            r.dst.node,
            r.gbps is not None and fabric.limit("rail_rdma_gbps", r.src, r.dst).ok(r.gbps),
            r.src.index,
        )
        for r in results
        # A direction with a node that does not answer was never measured: no evidence.
        if not r.loopback and r.unmeasured is None and not fabric.gone((r.src.node, r.dst.node))
    ]


def suspects_of(fabric: Fabric, nodes: Iterable[str]) -> list[str]:
    """The suspect and undecided lines of the bandwidth phase that concern `nodes`."""
    found = pair_runs(fabric).localization
    wanted = set(nodes)
    if found is None:
        return []
    lines = [s.line() for s in found.suspects if wanted & set(s.nodes)]
    if len(fabric.cluster.nodes) > 2:  # two nodes: nothing to tell apart, nothing to add
        lines += [u.line() for u in found.undecided if wanted & set(u.nodes)]
    return lines


# -- latency ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Latency:
    """One ib_write_lat run of a node pair: `src` (rail 0 of the pair's first node) to `dst`."""

    src: Rail
    dst: Rail
    result: Measured[pt.IbWriteLat]
    command: str = ""


def _latency(fr: FlowResult) -> Measured[pt.IbWriteLat]:
    if fr.unmeasured is not None:
        return Measured.not_measured(fr.unmeasured)
    if fr.error or fr.client is None:
        return Measured.failed(fr.error or "the ib_write_lat client did not run")
    return parsed(fr.client, "ib_write_lat", pt.parse_ib_write_lat)


def measure_latency(fabric: Fabric) -> dict[str, Latency]:
    pairs = bwplan.measured_pairs(fabric.plan, schedule(fabric))
    port = fabric.cluster.spec.bandwidth.base_port + LAT_PORT_OFFSET
    deadline = LAT_DEADLINE_S + LISTEN_WAIT_S
    out: dict[str, Latency] = {}
    # Pairs that share no node at once: a ping-pong is disturbed by nothing but its own NIC.
    for indices in sched.rounds([(p.a, p.b) for p in pairs]):
        ends = {pairs[i].id: (pairs[i].links[0].a, pairs[i].links[0].b) for i in indices}
        flows: dict[str, Flow] = {}
        for key, (a, b) in ends.items():
            if why := fabric.gone((a.node, b.node)):
                out[key] = Latency(a, b, Measured.not_measured(why))
                continue
            server = pt.build_ib_write_lat(b.rdma, port=port)
            client = pt.build_ib_write_lat(a.rdma, b.address.ip, port=port)
            flows[key] = Flow(
                key, Job(b.node, server, deadline), Job(a.node, client, deadline), port
            )
        done = run_flows(fabric.transport, list(flows.values())) if flows else {}
        for key, f in flows.items():
            out[key] = Latency(*ends[key], _latency(done[key]), f.client.command)
    return out


def latency(fabric: Fabric, pair: NodePair) -> Latency:
    return fabric.phase(LATENCY, measure_latency)[pair.id]


# -- TCP ----------------------------------------------------------------------------------------
# Every rail link of a pair its own iperf3 server and client (`-P bandwidth.iperf3_streams`, `-J`)
# at once, as one stream or one netdev under-reports on a Spark (DOMAIN.md §4). `iperf3 -J` exits
# 0 even when it could not connect: `error` decides.


def _read_iperf3(r: RunResult) -> Measured[float]:
    try:
        res = iperf3.parse_iperf3_json(r.stdout)
    except ParseError as exc:
        return Measured.failed(f"{r.node}: {exc}")
    if res.error is not None:
        return Measured.failed(f"{r.node}: iperf3 reported an error: {res.error}")
    return Measured(res.received_gbps if res.received_gbps is not None else res.sent_gbps)


def _iperf3_flow(fabric: Fabric, t: bwplan.RailTest, port: int) -> Flow:
    bw = fabric.cluster.spec.bandwidth
    server = iperf3.build_iperf3_server(port=port, one_off=True, bind=t.dst.address.ip)
    client = iperf3.build_iperf3_client(
        t.dst.address.ip,
        streams=bw.iperf3_streams,
        duration_s=bw.duration_s,
        port=port,
        bind=t.src.address.ip,
    )
    return tool_flow(t.key, port, bw.duration_s, (t.dst.node, server), (t.src.node, client))


IPERF3 = Tool("iperf3", _iperf3_flow, _read_iperf3, base_offset=10)


def tcp_runs(fabric: Fabric) -> RdmaRun:
    return fabric.phase(TCP, measure_tcp)


def measure_tcp(fabric: Fabric) -> RdmaRun:
    nic_temp.baseline(fabric)  # the NICs idle, before any traffic of the session
    plan = schedule(fabric)
    if not plan.rounds:
        return RdmaRun(plan, {}, {}, 0.0)
    streams = fabric.cluster.spec.bandwidth.iperf3_streams
    how = f", iperf3 -P {streams} on both netdevs of each pair at once"
    return run_schedule(fabric, IPERF3, "TCP", how, plan)
