"""The RDMA path, read only: each rail's RoCE port as `ibv_devinfo` reports it (state, active
MTU), every rail of every node in one concurrent round; and an `ib_write_lat` latency per
measured node pair (rail 0, first node to second), pairs that share no node at once.

A RoCE port's active MTU follows its netdev's MTU (4096 at 9000, 1024 at 1500), so a port
below the cluster's figure sends small RDMA packets however the pings look (DOMAIN.md §9).
`ibv_devinfo` comes with rdma-core's ibverbs-utils; where it is missing the check is not
measured, with the command that installs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure import bwplan
from pytest_sparkfabric.measure import schedule as sched
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.measure.flows import LISTEN_WAIT_S, Flow, FlowResult, run_flows
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.ibv_devinfo import IbvPort, build_ibv_devinfo, parse_ibv_devinfo
from pytest_sparkfabric.probes.perftest import (
    IbWriteLat,
    build_ib_write_lat_client,
    build_ib_write_lat_server,
    parse_ib_write_lat,
)
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.cluster.plan import Link, NodePair
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "rdma_path"
LATENCY: PhaseName = "rdma_lat"
LAT_PORT_OFFSET = 30
LAT_DEADLINE_S = 30.0
"""1000 round trips of ~2 us and perftest's set-up: seconds, even on a slow path."""


@dataclass(frozen=True, slots=True)
class RdmaPath:
    ports: Mapping[str, Measured[IbvPort]]
    """By rail id: its RoCE device's port 1, or why it could not be read."""


def _port(r: RunResult, rail: Rail) -> Measured[IbvPort]:
    got = parsed(r, "ibv_devinfo", parse_ibv_devinfo)
    if got.value is None:
        return Measured(error=got.error, unmeasured=got.unmeasured)
    mine = [p for p in got.value if p.device == rail.rdma and p.port == 1]
    if not mine:
        seen = ", ".join(p.device for p in got.value)
        return Measured.failed(f"{rail.node}: ibv_devinfo lists no {rail.rdma} port 1 ({seen})")
    return Measured.of(mine[0])


def measure(fabric: Fabric) -> RdmaPath:
    rails = fabric.cluster.rails
    results = fabric.run_all([Job(r.node, build_ibv_devinfo(r.rdma), QUICK_S) for r in rails])
    return RdmaPath({r.id: _port(x, r) for r, x in zip(rails, results, strict=True)})


def port(fabric: Fabric, rail: Rail) -> Measured[IbvPort]:
    return fabric.phase(NAME, measure).ports[rail.id]


@dataclass(frozen=True, slots=True)
class Latency:
    """One ib_write_lat run of a node pair: `src` (rail 0 of the pair's first node) to `dst`."""

    src: Rail
    dst: Rail
    result: Measured[IbWriteLat]
    command: str = ""


def _latency(fr: FlowResult, src: Rail) -> Measured[IbWriteLat]:
    if fr.unmeasured is not None:
        return Measured.not_measured(fr.unmeasured)
    if fr.error:
        return Measured.failed(fr.error)
    r = fr.client
    if r is None:
        return Measured.failed(f"{src.node}: the ib_write_lat client did not run")
    return parsed(r, "ib_write_lat", parse_ib_write_lat)


def measure_latency(fabric: Fabric) -> dict[str, Latency]:
    pairs = bwplan.measured_pairs(fabric.plan, bwplan.build(fabric.cluster, fabric.plan))
    port = fabric.cluster.spec.bandwidth.base_port + LAT_PORT_OFFSET
    out: dict[str, Latency] = {}
    # Pairs that share no node at once: a ping-pong is disturbed by nothing but its own NIC.
    for indices in sched.rounds([(p.a, p.b) for p in pairs]):
        flows: list[tuple[Flow, Link]] = []
        for pair in (pairs[i] for i in indices):
            link, key = pair.links[0], pair.id
            why = fabric.gone((link.a.node, link.b.node))
            if why:
                out[key] = Latency(link.a, link.b, Measured.not_measured(why))
                continue
            server = build_ib_write_lat_server(link.b.rdma, port=port)
            client = build_ib_write_lat_client(link.a.rdma, link.b.address.ip, port=port)
            deadline = LAT_DEADLINE_S + LISTEN_WAIT_S
            flow = Flow(
                key, Job(link.b.node, server, deadline), Job(link.a.node, client, deadline), port
            )
            flows.append((flow, link))
        done = run_flows(fabric.transport, [f for f, _ in flows]) if flows else {}
        for f, link in flows:
            out[str(f.key)] = Latency(
                link.a, link.b, _latency(done[f.key], link.a), f.client.command
            )
    return out


def latency(fabric: Fabric, pair: NodePair) -> Latency:
    return fabric.phase(LATENCY, measure_latency)[pair.id]
