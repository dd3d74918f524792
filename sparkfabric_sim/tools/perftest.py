"""perftest `ib_write_bw`: a server waits in the background; a client connects (over TCP to the
server's address), exchanges QP data, writes for -D seconds, and both print the report."""

from __future__ import annotations

import argparse
import functools
from ipaddress import IPv4Address

from sparkfabric_sim import gids, noise, roce, routing
from sparkfabric_sim.bandwidth import FlowRequest
from sparkfabric_sim.hardware import Netdev
from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.render import perftest as render
from sparkfabric_sim.state import Process
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.world import Ctx

DEFAULT_PORT = 18515
DEFAULT_SIZE = 65536
DEFAULT_ITERS = 5000
SETUP_S = 2.0
CONNECT_TIMEOUT_S = 3.0


@functools.cache  # built once: parse_args leaves a parser unchanged
def _parser() -> Parser:
    p = Parser("ib_write_bw")
    p.add_argument("-d", "--ib-dev", dest="dev")
    p.add_argument("-i", "--ib-port", dest="ib_port", type=int, default=1)
    p.add_argument("-q", "--qp", dest="qps", type=int, default=1)
    p.add_argument("-D", "--duration", dest="duration", type=int)
    p.add_argument("-p", "--port", dest="port", type=int, default=DEFAULT_PORT)
    p.add_argument("-x", "--gid-index", dest="gid", type=int)
    p.add_argument("-s", "--size", dest="size", type=int, default=DEFAULT_SIZE)
    p.add_argument("-n", "--iters", dest="iters", type=int, default=DEFAULT_ITERS)
    p.add_argument("-m", "--mtu", dest="mtu", type=int)
    p.add_argument("-T", "--tos", dest="tos", type=int)
    p.add_argument("--source_ip", dest="source_ip")
    for flag in (
        "-F",
        "--report_gbits",
        "--run_infinitely",
        "-R",
        "-a",
        "-b",
        "--cpu_util",
        "-z",
        "--odp",
    ):
        p.add_argument(flag, action="store_true", dest=flag.lstrip("-").replace("-", "_"))
    p.add_argument("peer", nargs="?")
    return p


def _device(ctx: Ctx, name: str | None) -> Netdev | None:
    if name is None:
        return sorted(ctx.node.netdevs, key=lambda d: (d.rail, d.port))[0]
    return ctx.node.by_rdma(name)


# -u 14 (perftest default): 4.096 us * 2^14 per try, 7 retries, then the completion error.
RETRY_EXHAUSTED_S = 0.067 * 8
SEND_DEPTH = 128


def _ib_mtu(netdev_mtu: int) -> int:
    return roce.active_mtu(netdev_mtu)


def _requested_mtu(active: int, asked: int | None) -> tuple[int, str, str]:
    """perftest set_mtu() (perftest_parameters.c L2690-2716): -m must be an IB MTU and not above
    the port's active MTU; (MTU used, stdout note, stderr note)."""
    if asked is None:
        return active, "", ""
    if asked not in roce.IB_MTUS:
        err = f" Invalid MTU - {asked} \n Please choose mtu from {{256,512,1024,2048,4096}}\n"
        return active, "", err
    if asked > active:
        note = f"Requested mtu is higher than active mtu \nChanging to active mtu - {active}\n"
        return active, note, ""
    return asked, "", ""


def _cpu_pct(ctx: Ctx, dev: Netdev, salt: str) -> float:
    # The CQ is busy-polled: about one of the GB10's 20 cores (a GB10 sample reads 5.07 %).
    return noise.uniform(ctx.seed, 4.6, 5.4, "cpu_util", dev.node, dev.name, salt)


def _qp(ctx: Ctx, dev: Netdev, i: int, salt: str) -> render.QpEnd:
    r = noise.rng(ctx.seed, "qp", dev.node, dev.name, salt, i)
    table = gids.table(ctx.seed, dev)
    index = gids.ipv4_v2_index(ctx.seed, dev)
    gid = table[index].address if index is not None else table[1].address
    return render.QpEnd(
        0x100 + r.getrandbits(10),
        r.getrandbits(24),
        r.getrandbits(24),
        (0xE0 << 40) | r.getrandbits(40) << 8,
        gid,
    )


def ib_write_bw(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _parser().parse_args(argv[1:])
    except ArgError:
        return fail(1, "", " Invalid Command or flag.\n Please check command line and run again.\n")
    dev = _device(ctx, a.dev)
    if dev is None:
        return fail(1, render.no_device(str(a.dev)))
    if a.peer is None:
        return _server(ctx, argv, a, dev)
    return _client(ctx, a, dev)


def _server(ctx: Ctx, argv: list[str], a: argparse.Namespace, dev: Netdev) -> Outcome:
    ctx.listen(argv, "perftest-server", a.port, {"args": a, "dev": dev})
    partial = (render.NO_PEAK if a.duration else "") + render.WAITING
    return Outcome(0, "", "", 0.0, partial, hang=True)


def _client(ctx: Ctx, a: argparse.Namespace, dev: Netdev) -> Outcome:
    try:
        peer_ip = IPv4Address(a.peer)
    except ValueError:
        return fail(1, render.connect_failed(a.peer, a.port))
    warn = render.NO_PEAK if a.duration or a.run_infinitely else ""
    r = routing.route(ctx, peer_ip)
    target: Netdev | None
    if r is not None and r.local:
        target = r.dev
    elif r is not None and r.dev is not None:
        target = routing.answerer(ctx, r.dev, peer_ip)
    else:
        target = None
    if target is None:
        return Outcome(1, warn, render.connect_failed(a.peer, a.port), CONNECT_TIMEOUT_S)
    server = ctx.rt.listener(target.node, a.port, "perftest-server", ctx.t)
    if server is None or (target.node != ctx.node.name and ctx.model.node(target.node).firewall):
        # A rejected connect() fails at once, as with no server (perftest_communication.c).
        return Outcome(1, warn, render.connect_failed(a.peer, a.port))
    sa: argparse.Namespace = server.detail["args"]  # type: ignore[assignment]
    sdev: Netdev = server.detail["dev"]  # type: ignore[assignment]
    loop = sdev.node == dev.node
    if not loop and not ctx.rt.reachable(dev, sdev, ctx.t):
        err = " Failed to modify QP to RTR\n Unable to Connect the HCA's through the link\n"
        return Outcome(1, warn, err, SETUP_S)
    seconds = float(a.duration) if a.duration else 0.0
    my_gid = gids.ipv4_v2_index(ctx.seed, dev)
    peer_gid = gids.ipv4_v2_index(ctx.seed, sdev)
    gid_ok = (a.gid is None or a.gid == my_gid) and (sa.gid is None or sa.gid == peer_gid)
    qps = max(1, a.qps)
    key = f"ib_write_bw:{dev.node}:{dev.rdma}->{sdev.node}:{sdev.rdma}:q{qps}:s{a.size}"
    request = FlowRequest("rdma", dev, sdev, qps, key)
    # Both ends exchange their MTU and use the smaller (perftest check_mtu).
    mine_mtu, mtu_note, mtu_err = _requested_mtu(_ib_mtu(dev.mtu), a.mtu)
    mtu = min(mine_mtu, _requested_mtu(_ib_mtu(sdev.mtu), sa.mtu)[0])
    fits = loop or roce.packet_bytes(mtu) <= ctx.rt.path_mtu(dev, sdev)
    mine = [_qp(ctx, dev, i, f"c{a.port}") for i in range(qps)]
    theirs = [_qp(ctx, sdev, i, f"s{a.port}") for i in range(qps)]
    if not (gid_ok and fits):
        return _no_ack(ctx, a, server, (dev, sdev, mtu, my_gid, peer_gid), (mine, theirs), warn)
    rate = ctx.rate(request)
    if not seconds:
        seconds = a.iters * a.size * 8 / (rate * 1e9)
    iters = int(rate * 1e9 / 8 * seconds / a.size) if rate else 0
    peak = 0.0 if a.duration or rate is None else rate * 1.0004

    def text(
        server_side: bool,
        gid_index: int | None,
        local: list[render.QpEnd],
        remote: list[render.QpEnd],
        device: str,
    ) -> str:
        test = render.BwTest(device, qps, server_side, mtu, gid_index or 0, local, remote)
        side = sa if server_side else a
        # --cpu_util counts only in duration mode (perftest_parameters.c L1798-1801).
        cpu = _cpu_pct(ctx, sdev if server_side else dev, str(a.port))
        return render.report(
            test,
            duration_mode=bool(a.duration),
            gbits=a.report_gbits,
            size=a.size,
            iterations=iters,
            avg_gbps=rate,
            peak_gbps=peak,
            cpu_pct=cpu if side.cpu_util and side.duration else None,
        )

    total = SETUP_S + seconds
    lonely_cpu = a.cpu_util and not a.duration
    notes = (render.DASHES + "\n" if lonely_cpu else "") + mtu_note
    errors = (" CPU Utilization works only with Duration mode.\n" if lonely_cpu else "") + mtu_err
    client_out = text(False, a.gid if a.gid is not None else my_gid, mine, theirs, dev.rdma)
    client_out = notes + client_out if not warn else warn + notes + client_out[len(warn) :]
    if ctx.changes():
        if rate is not None:
            ctx.flow_done(request, rate, seconds)
        server_out = text(True, sa.gid if sa.gid is not None else peer_gid, theirs, mine, sdev.rdma)
        server.outcome = Outcome(0, server_out, "", ctx.t + total - server.start)
        server.end = ctx.t + total
        server.finished = True
    return Outcome(0, client_out, errors, total, warn)


def _no_ack(
    ctx: Ctx,
    a: argparse.Namespace,
    server: Process,
    ends: tuple[Netdev, Netdev, int, int | None, int | None],
    qps: tuple[list[render.QpEnd], list[render.QpEnd]],
    warn: str,
) -> Outcome:
    """Connected, but no packet gets through (GID the peer cannot route, frames too big for the
    path): both sides print their header and the table head, no row; the client fails."""
    dev, sdev, mtu, my_gid, peer_gid = ends
    sa: argparse.Namespace = server.detail["args"]  # type: ignore[assignment]
    mine, theirs = qps

    def head(server_side: bool) -> str:
        gid = (sa.gid if sa.gid is not None else peer_gid) if server_side else a.gid
        gid = gid if gid is not None else my_gid
        local, remote = (theirs, mine) if server_side else (mine, theirs)
        device = sdev.rdma if server_side else dev.rdma
        t = render.BwTest(device, len(mine), server_side, mtu, gid or 0, local, remote)
        text = render.report(
            t,
            duration_mode=bool(a.duration),
            gbits=a.report_gbits,
            size=a.size,
            iterations=0,
            avg_gbps=None,
            peak_gbps=0.0,
        )
        return text.removesuffix(render.DASHES + "\n")

    total = SETUP_S + RETRY_EXHAUSTED_S
    if ctx.changes():
        # The server waits for the client's report and gives up when the socket closes.
        err = " Failed to exchange data between server and clients\n"
        server.outcome = Outcome(1, head(True), err, ctx.t + total - server.start)
        server.end = ctx.t + total
        server.finished = True
    sent = SEND_DEPTH * len(mine)
    return Outcome(1, warn + head(False), render.retry_exceeded(sent), total, warn)


TOOLS = {"ib_write_bw": ib_write_bw}
