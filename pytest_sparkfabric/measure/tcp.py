"""TCP bandwidth with iperf3 in the RDMA schedule: every rail link of a pair its own server and
client (`-P bandwidth.iperf3_streams`, `-J`) at once, as one stream or one netdev under-reports on
a Spark (DOMAIN.md §4). `iperf3 -J` exits 0 even when it could not connect: `error` decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure import bwplan, soak
from pytest_sparkfabric.measure.engine import PhaseName
from pytest_sparkfabric.measure.flows import Flow, tool_flow
from pytest_sparkfabric.measure.rdma import BwResult, Reading, Tool, run_schedule, schedule
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.iperf3 import (
    build_iperf3_client,
    build_iperf3_server,
    parse_iperf3_json,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.plan import NodePair
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "tcp"


@dataclass(frozen=True)
class TcpRun:
    links: dict[str, tuple[BwResult, ...]]
    """Measured rail link id -> one result per measured direction, a->b first."""
    round_of: dict[str, int]
    elapsed_s: float


def _read(r: RunResult) -> Reading:
    try:
        res = parse_iperf3_json(r.stdout)
    except ParseError as exc:
        return Reading(None, f"{r.node}: {exc}")
    if res.error is not None:
        return Reading(None, f"{r.node}: iperf3 reported an error: {res.error}")
    gbps = res.received_gbps if res.received_gbps is not None else res.sent_gbps
    return Reading(gbps, None, res.streams, res.retransmits)


def _flow(fabric: Fabric, t: bwplan.RailTest, port: int) -> Flow:
    bw = fabric.cluster.spec.bandwidth
    server = build_iperf3_server(port=port, one_off=True, bind=t.dst.address.ip)
    client = build_iperf3_client(
        t.dst.address.ip,
        streams=bw.iperf3_streams,
        duration_s=bw.duration_s,
        port=port,
        bind=t.src.address.ip,
    )
    return tool_flow(t.key, port, bw.duration_s, (t.dst.node, server), (t.src.node, client))


IPERF3 = Tool("iperf3", _flow, _read, base_offset=10)


def runs(fabric: Fabric) -> TcpRun:
    return fabric.phase(NAME, measure)


def pair_results(fabric: Fabric, pair: NodePair) -> tuple[int, tuple[BwResult, ...]]:
    """The pair's first round and every measured direction of each of its rails."""
    run = runs(fabric)
    return run.round_of[pair.id], tuple(r for link in pair.links for r in run.links[link.id])


def measure(fabric: Fabric) -> TcpRun:
    soak.baseline(fabric)  # the NICs idle, before any traffic of the session
    plan = schedule(fabric)
    if not plan.rounds:
        return TcpRun({}, {}, 0.0)
    streams = fabric.cluster.spec.bandwidth.iperf3_streams
    how = f", iperf3 -P {streams} on both netdevs of each pair at once"
    return TcpRun(*run_schedule(fabric, IPERF3, "TCP", how, plan))
