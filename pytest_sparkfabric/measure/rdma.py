"""RDMA bandwidth with ib_write_bw: the NIC self-test (loopback), then node pairs in rounds.

Loopback comes first: server and client on one box, the client to the rail's own address, no
cable involved. A throttled NIC (~13 Gb/s) shows here, so a slow pair later is blamed on the NIC,
not the cable. Then every node pair runs both rails at the same time (each rail its own
ib_write_bw), which gives the per-rail figure of each rail link and their sum for the pair (the
number that shows a port driven on one half only). Pairs that share no node run together, in the
rounds of `schedule.rounds`; ring and mesh cables join port 0 to port 1, so each direction runs
as its own step.

Settings (cluster.yaml `bandwidth:`): `qps` 4 (one QP tops out at 92-98 Gb/s, four reach
105-112, DOMAIN.md §5) and `duration_s` 10 (long enough for a steady average, short enough for
an 8-node switch: 7 rounds of pairs + 2 of loopback = 90 s).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from pytest_sparkfabric.measure.engine import PhaseName, result_error
from pytest_sparkfabric.measure.flows import LISTEN_WAIT_S, SLACK_S, Flow, FlowResult, run_flows
from pytest_sparkfabric.measure.schedule import rounds
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.perftest import (
    build_ib_write_bw_client,
    build_ib_write_bw_server,
    parse_ib_write_bw,
)
from pytest_sparkfabric.result import Measured
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.cluster.plan import Link, NodePair
    from pytest_sparkfabric.measure.engine import Fabric

K = TypeVar("K", bound=Hashable)
NAME: PhaseName = "rdma"
LOOPBACK: PhaseName = "loopback"
LOOPBACK_PORT_OFFSET = 0
PAIR_PORT_OFFSET = 0


@dataclass(frozen=True, slots=True)
class BwResult:
    """One ib_write_bw client run: from `src` to `dst` (the same rail for loopback)."""

    src: Rail
    dst: Rail
    gbps: float | None
    error: str | None
    round: int
    command: str = ""
    seconds: float | None = None
    """How long the client ran (transport clock): -D plus perftest's set-up."""

    @property
    def loopback(self) -> bool:
        return self.src == self.dst

    @property
    def where(self) -> str:
        return self.src.id if self.loopback else f"{self.src.id}->{self.dst.id}"

    def measured(self) -> Measured[float]:
        if self.gbps is None:
            return Measured.failed(self.error or f"{self.where}: no result")
        return Measured.of(self.gbps)


@dataclass(frozen=True)
class Schedule:
    rounds: tuple[tuple[NodePair, ...], ...]
    both_ways: bool
    duration_s: int

    @property
    def steps(self) -> int:
        return len(self.rounds) * (2 if self.both_ways else 1)

    def lines(self) -> list[str]:
        return [
            f"round {k}/{len(self.rounds)}: " + ", ".join(p.id for p in pairs)
            for k, pairs in enumerate(self.rounds, 1)
        ]


@dataclass(frozen=True)
class Loopbacks:
    results: dict[str, BwResult]
    rounds: int
    elapsed_s: float


@dataclass(frozen=True)
class RdmaRun:
    schedule: Schedule
    links: dict[str, tuple[BwResult, ...]]
    """Rail link id -> its results, a->b first (and b->a where directions differ)."""
    round_of: dict[str, int]
    """Node pair id -> its round (1-based)."""
    elapsed_s: float
    """Transport-clock seconds the pair rounds took."""


def _outcome(fr: FlowResult) -> tuple[float | None, str | None]:
    if fr.error:
        return None, fr.error
    r = fr.client
    if r is None:
        return None, "the client did not run"
    err = result_error(r, "ib_write_bw")
    if err:
        return None, err
    try:
        return parse_ib_write_bw(r.stdout).bw_avg_gbps, None
    except ParseError as exc:
        # perftest says why it gave up on stderr (`Couldn't connect to <ip>:<port>`, ...).
        said = " / ".join(line.strip() for line in r.stderr.splitlines() if line.strip())
        return None, f"{r.node}: {exc}" + (f"; stderr: {said[:300]}" if said else "")


def _flow(fabric: Fabric, key: Hashable, src: Rail, dst: Rail, port: int) -> Flow:
    bw = fabric.cluster.spec.bandwidth
    dur = bw.duration_s
    server = build_ib_write_bw_server(dst.rdma, qps=bw.qps, duration_s=dur, port=port)
    client = build_ib_write_bw_client(
        src.rdma, dst.address.ip, qps=bw.qps, duration_s=dur, port=port
    )
    return Flow(
        key,
        Job(dst.node, server, dur + SLACK_S + LISTEN_WAIT_S),
        Job(src.node, client, dur + SLACK_S),
        port,
    )


def _run_step(
    fabric: Fabric, wanted: list[tuple[K, Rail, Rail, int]], round_no: int
) -> dict[K, BwResult]:
    flows = [_flow(fabric, key, src, dst, port) for key, src, dst, port in wanted]
    done = run_flows(fabric.transport, flows)
    out: dict[K, BwResult] = {}
    for (key, src, dst, _), flow in zip(wanted, flows, strict=True):
        gbps, error = _outcome(done[key])
        client = done[key].client
        seconds = client.duration_s if client is not None else None
        out[key] = BwResult(src, dst, gbps, error, round_no, flow.client.command, seconds)
    return out


def counted(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


# -- loopback ---------------------------------------------------------------------------------


def loopbacks(fabric: Fabric) -> Loopbacks:
    return fabric.phase(LOOPBACK, measure_loopbacks)


def loopback(fabric: Fabric, rail: Rail) -> BwResult:
    return loopbacks(fabric).results[rail.id]


def measure_loopbacks(fabric: Fabric) -> Loopbacks:
    cluster = fabric.cluster
    clock = fabric.transport.clock
    base = cluster.spec.bandwidth.base_port + LOOPBACK_PORT_OFFSET
    slots = max(len(n.rails) for n in cluster.nodes)
    dur = cluster.spec.bandwidth.duration_s
    down = fabric.unreachable()
    results: dict[str, BwResult] = {
        r.id: BwResult(r, r, None, down[r.node], 0) for r in cluster.rails if r.node in down
    }
    live = [n for n in cluster.nodes if n.name not in down]
    if not live:
        return Loopbacks(results, 0, 0.0)
    fabric.progress(
        f"NIC self-test: loopback ib_write_bw on every rail, {counted(slots, 'round')} of "
        f"{dur} s (every node at once, one rail per node per round)"
    )
    start = clock.now()
    for k in range(slots):
        rails = [n.rails[k] for n in live if k < len(n.rails)]
        fabric.detail(f"loopback round {k + 1}/{slots}: " + ", ".join(r.id for r in rails))
        got = _run_step(fabric, [(r.id, r, r, base + k) for r in rails], k + 1)
        results.update(got)
    return Loopbacks(results, slots, clock.now() - start)


# -- node pairs -------------------------------------------------------------------------------


def schedule(fabric: Fabric) -> Schedule:
    """Rounds of the node pairs whose two nodes both answer (the others cannot be measured)."""
    down = fabric.unreachable()
    pairs = [p for p in fabric.plan.pairs if p.a not in down and p.b not in down]
    groups = rounds([(p.a, p.b) for p in pairs])
    both = any(link.a.port != link.b.port for link in fabric.plan.links)
    return Schedule(
        tuple(tuple(pairs[i] for i in g) for g in groups),
        both,
        fabric.cluster.spec.bandwidth.duration_s,
    )


def unmeasured_pairs(fabric: Fabric) -> list[tuple[NodePair, str]]:
    """Node pairs left out of the bandwidth rounds (a node does not answer), with the line why."""
    return [(p, line) for p in fabric.plan.pairs if (line := fabric.down_line((p.a, p.b)))]


def pair_runs(fabric: Fabric) -> RdmaRun:
    return fabric.phase(NAME, measure)


def link_results(fabric: Fabric, link: Link) -> tuple[BwResult, ...]:
    return pair_runs(fabric).links[link.id]


def measure(fabric: Fabric) -> RdmaRun:
    loopbacks(fabric)  # the NIC self-test always comes first
    plan = schedule(fabric)
    clock = fabric.transport.clock
    base = fabric.cluster.spec.bandwidth.base_port + PAIR_PORT_OFFSET
    directions = ("a->b", "b->a") if plan.both_ways else ("a->b",)
    links: dict[str, list[BwResult]] = {}
    round_of: dict[str, int] = {}
    for pair, why in unmeasured_pairs(fabric):
        round_of[pair.id] = 0
        links.update(
            {x.id: [BwResult(x.a, x.b, None, why, 0)] * len(directions) for x in pair.links}
        )
    n_pairs = sum(len(r) for r in plan.rounds)
    if not n_pairs:
        return RdmaRun(plan, {k: tuple(v) for k, v in links.items()}, round_of, 0.0)
    fabric.progress(
        f"RDMA bandwidth: {counted(n_pairs, 'node pair')}, both rails at once, in "
        f"{counted(len(plan.rounds), 'round')} x {counted(len(directions), 'direction')} x "
        f"{plan.duration_s} s (no node in two tests at once)"
    )
    start = clock.now()
    for k, (pairs, line) in enumerate(zip(plan.rounds, plan.lines(), strict=True), 1):
        for direction in directions:
            suffix = f" ({direction})" if plan.both_ways else ""
            fabric.detail(f"RDMA {line}{suffix}")
            wanted: list[tuple[tuple[str, str], Rail, Rail, int]] = []
            for pair in pairs:
                round_of[pair.id] = k
                for link in pair.links:
                    src, dst = (link.a, link.b) if direction == "a->b" else (link.b, link.a)
                    wanted.append(((link.id, direction), src, dst, base + link.rail))
            for (link_id, _), result in _run_step(fabric, wanted, k).items():
                links.setdefault(link_id, []).append(result)
    return RdmaRun(plan, {k: tuple(v) for k, v in links.items()}, round_of, clock.now() - start)


@dataclass(frozen=True)
class PairDirection:
    direction: str
    rails: tuple[BwResult, ...]

    @property
    def total_gbps(self) -> float | None:
        if any(r.gbps is None for r in self.rails):
            return None
        return sum(r.gbps or 0.0 for r in self.rails)


def pair_result(fabric: Fabric, pair: NodePair) -> tuple[int, tuple[PairDirection, ...]]:
    """The pair's round and, per direction, its rails measured at the same time."""
    run = pair_runs(fabric)
    per_link = [run.links[link.id] for link in pair.links]
    directions = []
    for i in range(len(per_link[0])):
        rails = tuple(results[i] for results in per_link)
        directions.append(PairDirection("a->b" if i == 0 else "b->a", rails))
    return run.round_of[pair.id], tuple(directions)
