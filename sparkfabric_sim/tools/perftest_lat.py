"""perftest `ib_write_lat`: a server waits; a client connects over TCP to the server's address,
ping-pongs 1000 RDMA writes of 2 bytes and both print one latency row.

Latency: ~1.47 us over one cable (t_avg of two GB10s, tests/data/ib_write_lat/); a switch hop
adds a fraction of a microsecond (assumed 0.6-1.0: a hardware-forwarding switch port to port;
no Spark figure published), and a switch that forwards in software (its CPU) adds tens of
microseconds (assumed 15-40, the software path DOMAIN.md §7 blames for ~10 Gb/s).
"""

from __future__ import annotations

import argparse
import functools
from ipaddress import IPv4Address

from sparkfabric_sim import noise, routing
from sparkfabric_sim.hardware import Netdev
from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.render import perftest as render
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.tools.perftest import CONNECT_TIMEOUT_S, DEFAULT_PORT, SETUP_S
from sparkfabric_sim.world import Ctx

ITERS = 1000
DIRECT_US = (1.42, 1.52)
SWITCH_HOP_US = (0.6, 1.0)
CPU_FORWARDING_US = (15.0, 40.0)
HEAD = (
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
    "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"
)


@functools.cache
def _parser() -> Parser:
    p = Parser("ib_write_lat")
    p.add_argument("-d", "--ib-dev", dest="dev")
    p.add_argument("-i", "--ib-port", dest="ib_port", type=int, default=1)
    p.add_argument("-p", "--port", dest="port", type=int, default=DEFAULT_PORT)
    p.add_argument("-s", "--size", dest="size", type=int, default=2)
    p.add_argument("-n", "--iters", dest="iters", type=int, default=ITERS)
    p.add_argument("-x", "--gid-index", dest="gid", type=int)
    for flag in ("-F", "--report_gbits", "-R", "-a"):
        p.add_argument(flag, action="store_true", dest=flag.lstrip("-").replace("-", "_"))
    p.add_argument("peer", nargs="?")
    return p


def _latency_us(ctx: Ctx, dev: Netdev, peer: Netdev, key: str) -> float:
    lat = noise.uniform(ctx.seed, *DIRECT_US, key)
    legs = ctx.model.legs_between(dev, peer)
    if legs:
        lat += noise.uniform(ctx.seed, *SWITCH_HOP_US, key, "hop")
        if ctx.model.switch is not None and not ctx.model.switch.hw_offload:
            lat += noise.uniform(ctx.seed, *CPU_FORWARDING_US, key, "cpu")
    return lat


def _report(dev: Netdev, size: int, iters: int, lat: float) -> str:
    head = (
        f"{render.DASHES}\n                    RDMA_Write Latency Test\n"
        f" Dual-port       : OFF          Device         : {dev.rdma}\n"
        " Number of qps   : 1            Transport type : IB\n"
        " Connection type : RC           Using SRQ      : OFF\n"
        " TX depth        : 1\n Link type       : Ethernet\n"
        f"{render.DASHES}\n"
    )
    cells = (lat - 0.05, lat + 0.46, lat, lat, 0.0, lat + 0.10, lat + 0.46)
    row = f" {size:<7d}{iters:<14d}" + "".join(f"{c:<15.2f}" for c in cells)
    return f"{head}{HEAD}\n{row.rstrip()}\n{render.DASHES}\n"


def ib_write_lat(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _parser().parse_args(argv[1:])
    except ArgError:
        return fail(1, " Invalid Command or flag.\n Please check command line and run again.\n")
    dev = ctx.node.by_rdma(a.dev) if a.dev else None
    if dev is None:
        return fail(1, render.no_device(str(a.dev)))
    if a.peer is None:
        ctx.listen(argv, "perftest-server", a.port, {"args": a, "dev": dev, "lat": True})
        return Outcome(0, "", "", 0.0, render.WAITING, hang=True)
    return _client(ctx, a, dev)


def _client(ctx: Ctx, a: argparse.Namespace, dev: Netdev) -> Outcome:
    try:
        peer_ip = IPv4Address(a.peer)
    except ValueError:
        return fail(1, render.connect_failed(a.peer, a.port))
    r = routing.route(ctx, peer_ip)
    target = routing.answerer(ctx, r.dev, peer_ip) if r is not None and r.dev else None
    server = ctx.rt.listener(target.node, a.port, "perftest-server", ctx.t) if target else None
    if server is None or not server.detail.get("lat"):
        return Outcome(1, "", render.connect_failed(a.peer, a.port), CONNECT_TIMEOUT_S)
    sdev: Netdev = server.detail["dev"]  # type: ignore[assignment]
    if ctx.model.node(sdev.node).firewall or not ctx.rt.reachable(dev, sdev, ctx.t):
        return Outcome(1, "", render.connect_failed(a.peer, a.port), CONNECT_TIMEOUT_S)
    lat = _latency_us(ctx, dev, sdev, f"ib_write_lat:{dev.node}:{dev.rdma}->{sdev.node}")
    total = SETUP_S + a.iters * lat * 2e-6
    if ctx.changes():
        server.outcome = Outcome(0, _report(sdev, a.size, a.iters, lat), "", total)
        server.end = ctx.t + total
        server.finished = True
    return Outcome(0, _report(dev, a.size, a.iters, lat), "", total)


TOOLS = {"ib_write_lat": ib_write_lat}
