"""TCP bandwidth with iperf3: parallel streams on both netdevs of a pair at the same time.

One TCP stream or one netdev under-reports on a Spark (DOMAIN.md §4), so every rail link of the
pair gets its own server (bound to the far rail's address) and client (bound to the near one,
`-P bandwidth.iperf3_streams`, `-J`), all at once. `iperf3 -J` exits 0 even when it could not
connect: the JSON `error` key decides. Pairs run in the same rounds as RDMA (no node twice).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure import switch_counters
from pytest_sparkfabric.measure.engine import PhaseName, result_error
from pytest_sparkfabric.measure.flows import LISTEN_WAIT_S, SLACK_S, Flow, FlowResult
from pytest_sparkfabric.measure.rdma import counted, schedule, unmeasured_pairs
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.iperf3 import (
    build_iperf3_client,
    build_iperf3_server,
    parse_iperf3_json,
)
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.plan import Link, NodePair
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "tcp"
TCP_PORT_OFFSET = 10


@dataclass(frozen=True, slots=True)
class TcpResult:
    link: Link
    gbps: float | None
    error: str | None
    round: int
    streams: int | None = None
    retransmits: int | None = None
    command: str = ""

    @property
    def label(self) -> str:
        return f"{self.link.a.netdev} (rail{self.link.rail})"


@dataclass(frozen=True)
class TcpRun:
    links: dict[str, TcpResult]
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
    run = runs(fabric)
    return run.round_of[pair.id], tuple(run.links[link.id] for link in pair.links)


def _flow(fabric: Fabric, link: Link) -> Flow:
    bw = fabric.cluster.spec.bandwidth
    port = bw.base_port + TCP_PORT_OFFSET + link.rail
    server = build_iperf3_server(port=port, one_off=True, bind=link.b.address.ip)
    client = build_iperf3_client(
        link.b.address.ip,
        streams=bw.iperf3_streams,
        duration_s=bw.duration_s,
        port=port,
        bind=link.a.address.ip,
    )
    return Flow(
        link.id,
        Job(link.b.node, server, bw.duration_s + SLACK_S + LISTEN_WAIT_S),
        Job(link.a.node, client, bw.duration_s + SLACK_S),
        port,
    )


def measure(fabric: Fabric) -> TcpRun:
    plan = schedule(fabric)
    clock = fabric.transport.clock
    bw = fabric.cluster.spec.bandwidth
    links: dict[str, TcpResult] = {}
    round_of: dict[str, int] = {}
    for pair, why in unmeasured_pairs(fabric):
        round_of[pair.id] = 0
        links.update({link.id: TcpResult(link, None, why, 0) for link in pair.links})
    if not plan.rounds:
        return TcpRun(links, round_of, 0.0)
    fabric.progress(
        f"TCP bandwidth: iperf3 -P {bw.iperf3_streams} on both netdevs of each pair at once, "
        f"{counted(len(plan.rounds), 'round')} x {bw.duration_s} s"
    )
    start = clock.now()
    for k, (pairs, line) in enumerate(zip(plan.rounds, plan.lines(), strict=True), 1):
        fabric.detail(f"TCP {line}")
        wanted = [link for pair in pairs for link in pair.links]
        round_of.update({pair.id: k for pair in pairs})
        flows = [_flow(fabric, link) for link in wanted]
        done = switch_counters.run_watched(fabric, f"TCP round {k}", flows)
        for link, flow in zip(wanted, flows, strict=True):
            gbps, error, streams, retrans = _outcome(done[link.id])
            links[link.id] = TcpResult(link, gbps, error, k, streams, retrans, flow.client.command)
    return TcpRun(links, round_of, clock.now() - start)
