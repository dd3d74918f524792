"""perftest `ib_write_bw`: a server waits in the background; a client connects (over TCP to the
server's address), exchanges QP data, writes for -D seconds, and both print the report."""

from __future__ import annotations

import argparse
from ipaddress import IPv4Address

from sparkfabric_sim import gids, noise, routing
from sparkfabric_sim.bandwidth import FlowRequest
from sparkfabric_sim.hardware import Netdev
from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.render import perftest as render
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.world import Ctx

DEFAULT_PORT = 18515
DEFAULT_SIZE = 65536
DEFAULT_ITERS = 5000
SETUP_S = 2.0
CONNECT_TIMEOUT_S = 3.0


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


def _ib_mtu(netdev_mtu: int) -> int:
    for ib in (4096, 2048, 1024, 512):
        if netdev_mtu >= ib + 100:
            return ib
    return 256


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
    warn = render.NO_PEAK if a.duration else ""
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
    rate = ctx.rate(request) if gid_ok else None
    if rate is not None and not seconds:
        seconds = a.iters * a.size * 8 / (rate * 1e9)
    mine = [_qp(ctx, dev, i, f"c{a.port}") for i in range(qps)]
    theirs = [_qp(ctx, sdev, i, f"s{a.port}") for i in range(qps)]
    mtu = _ib_mtu(min(dev.mtu, sdev.mtu))
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
        return render.report(
            test,
            duration_mode=bool(a.duration),
            gbits=a.report_gbits,
            size=a.size,
            iterations=iters,
            avg_gbps=rate,
            peak_gbps=peak,
        )

    total = SETUP_S + seconds
    client_out = text(False, a.gid if a.gid is not None else my_gid, mine, theirs, dev.rdma)
    if not ctx.dry_run:
        if rate is not None:
            ctx.flow_done(request, rate, seconds)
        server_out = text(True, sa.gid if sa.gid is not None else peer_gid, theirs, mine, sdev.rdma)
        server.outcome = Outcome(0, server_out, "", ctx.t + total - server.start)
        server.end = ctx.t + total
        server.finished = True
    return Outcome(0, client_out, "", total, warn)


TOOLS = {"ib_write_bw": ib_write_bw}
