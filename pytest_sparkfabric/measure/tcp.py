"""TCP bandwidth with iperf3: parallel streams on both netdevs of a pair at the same time.

One TCP stream or one netdev under-reports on a Spark (DOMAIN.md §4), so every rail link of the
pair gets its own server (bound to the far rail's address) and client (bound to the near one,
`-P bandwidth.iperf3_streams`, `-J`), all at once. `iperf3 -J` exits 0 even when it could not
connect: the JSON `error` key decides. Pairs run in the same schedule as RDMA
(`bandwidth.schedule` and `bandwidth.directions`), so every node sends and receives on every rail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure import bwplan, rail_counters, soak_temps, switch_counters
from pytest_sparkfabric.measure.engine import PhaseName, result_error
from pytest_sparkfabric.measure.flows import LISTEN_WAIT_S, SLACK_S, Flow, FlowResult
from pytest_sparkfabric.measure.rdma import running, schedule
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.iperf3 import (
    build_iperf3_client,
    build_iperf3_server,
    parse_iperf3_json,
)
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.cluster.plan import Link, NodePair
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "tcp"
TCP_PORT_OFFSET = 10


@dataclass(frozen=True, slots=True)
class TcpResult:
    link: Link
    src: Rail
    dst: Rail
    gbps: float | None
    error: str | None
    round: int
    streams: int | None = None
    retransmits: int | None = None
    command: str = ""
    unmeasured: NotMeasured | None = None
    """Why it could not run at all (iperf3 missing, a node lost): not the fabric's fault."""

    @property
    def label(self) -> str:
        return f"{self.src.node}->{self.dst.node} {self.src.netdev} (rail{self.link.rail})"


@dataclass(frozen=True)
class TcpRun:
    links: dict[str, tuple[TcpResult, ...]]
    """Measured rail link id -> one result per measured direction, a->b first."""
    round_of: dict[str, int]
    elapsed_s: float


def _outcome(fr: FlowResult) -> tuple[float | None, str | None, int | None, int | None]:
    if fr.error:
        return None, fr.error, None, None
    r = fr.client
    if r is None:
        return None, "the client did not run", None, None
    err = result_error(r, "iperf3")
    if err:
        return None, err, None, None
    try:
        res = parse_iperf3_json(r.stdout)
    except ParseError as exc:
        return None, f"{r.node}: {exc}", None, None
    if res.error is not None:
        return None, f"{r.node}: iperf3 reported an error: {res.error}", None, None
    gbps = res.received_gbps if res.received_gbps is not None else res.sent_gbps
    return gbps, None, res.streams, res.retransmits


def runs(fabric: Fabric) -> TcpRun:
    return fabric.phase(NAME, measure)


def pair_results(fabric: Fabric, pair: NodePair) -> tuple[int, tuple[TcpResult, ...]]:
    """The pair's first round and every measured direction of each of its rails."""
    run = runs(fabric)
    return run.round_of[pair.id], tuple(r for link in pair.links for r in run.links[link.id])


def _flow(fabric: Fabric, test: bwplan.RailTest) -> Flow:
    bw = fabric.cluster.spec.bandwidth
    port = bwplan.port(bw.base_port + TCP_PORT_OFFSET, test)
    server = build_iperf3_server(port=port, one_off=True, bind=test.dst.address.ip)
    client = build_iperf3_client(
        test.dst.address.ip,
        streams=bw.iperf3_streams,
        duration_s=bw.duration_s,
        port=port,
        bind=test.src.address.ip,
    )
    return Flow(
        test.key,
        Job(test.dst.node, server, bw.duration_s + SLACK_S + LISTEN_WAIT_S),
        Job(test.src.node, client, bw.duration_s + SLACK_S),
        port,
    )


def measure(fabric: Fabric) -> TcpRun:
    soak_temps.baseline(fabric)  # the NICs idle, before any traffic of the session
    plan = schedule(fabric)
    clock = fabric.transport.clock
    bw = fabric.cluster.spec.bandwidth
    if not plan.rounds:
        return TcpRun({}, {}, 0.0)
    head, lines = running(fabric, "TCP", plan)
    how = f", iperf3 -P {bw.iperf3_streams} on both netdevs of each pair at once"
    fabric.progress(head + how if lines else head)
    start = clock.now()
    results: dict[tuple[str, str], TcpResult] = {}
    rail_tests = list(bwplan.rail_tests(fabric.plan, plan))
    busy = {n for tests in rail_tests for t in tests for n in (t.src.node, t.dst.node)}
    busy -= set(fabric.unreachable())
    watch = rail_counters.watch(fabric, "tcp", [r for r in fabric.cluster.rails if r.node in busy])
    for k, tests in enumerate(rail_tests, 1):
        line = lines.get(k) or f"TCP round {k}"
        if k in lines:
            fabric.detail(line)
        live = []
        for t in tests:
            why = fabric.gone((t.src.node, t.dst.node))
            if why:
                results[t.key] = TcpResult(
                    t.link, t.src, t.dst, None, why.reason, t.round, unmeasured=why
                )
            else:
                live.append(t)
        flows = [_flow(fabric, t) for t in live]
        done = switch_counters.run_watched(fabric, f"TCP round {k}", flows) if flows else {}
        watch.step(line)
        for t, flow in zip(live, flows, strict=True):
            fr = done[t.key]
            gbps, error, streams, retrans = _outcome(fr)
            results[t.key] = TcpResult(
                t.link, t.src, t.dst, gbps, error, t.round, streams, retrans, flow.client.command,
                fr.unmeasured,
            )  # fmt: skip
    links, round_of = bwplan.by_link(fabric.plan, plan, results)
    return TcpRun(links, round_of, clock.now() - start)
