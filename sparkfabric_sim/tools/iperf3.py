"""iperf3 3.16: `-s [-1]` servers in the background, `-c HOST -P N -t T [-J] [-B ADDR]` clients."""

from __future__ import annotations

import argparse
from ipaddress import IPv4Address

from sparkfabric_sim import noise, routing
from sparkfabric_sim.bandwidth import FlowRequest
from sparkfabric_sim.hardware import ARCH, KERNEL_RELEASE, Netdev
from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.render import iperf3 as render
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.world import Ctx

DEFAULT_PORT = 5201
CONNECT_TIMEOUT_S = 3.0
REFUSED = (
    "unable to connect to server - server may have stopped running or use a different port, "
    "firewall issue, etc.: Connection refused"
)
NO_ROUTE = REFUSED.replace("Connection refused", "No route to host")


def _parser() -> Parser:
    p = Parser("iperf3")
    p.add_argument("-s", "--server", action="store_true")
    p.add_argument("-c", "--client", dest="host")
    p.add_argument("-p", "--port", type=int, default=DEFAULT_PORT)
    p.add_argument("-1", "--one-off", dest="one_off", action="store_true")
    p.add_argument("-B", "--bind", dest="bind")
    p.add_argument("-P", "--parallel", dest="streams", type=int, default=1)
    p.add_argument("-t", "--time", dest="seconds", type=int, default=10)
    p.add_argument("-J", "--json", dest="json", action="store_true")
    p.add_argument("-R", "--reverse", action="store_true")
    for opt in ("-i", "-O", "-l", "-w", "-A", "-C", "--logfile", "-M"):
        p.add_argument(opt, dest=opt.lstrip("-"))
    for flag in ("-Z", "-V", "--forceflush", "-D", "-N", "-u", "--get-server-output"):
        p.add_argument(flag, action="store_true", dest=flag.lstrip("-").replace("-", "_"))
    return p


def _error(ctx: Ctx, a: argparse.Namespace, message: str, seconds: float = 0.01) -> Outcome:
    if a.json:
        doc = render.error_document(ctx.node.name, KERNEL_RELEASE, ARCH, message)
        return Outcome(1, doc, "", seconds)
    return Outcome(1, "", f"iperf3: error - {message}\n", seconds)


def iperf3(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _parser().parse_args(argv[1:])
    except ArgError as exc:
        return fail(1, f"iperf3: parameter error - {exc.message}\n")
    if a.server:
        ctx.listen(argv, "iperf3-server", a.port, {"args": a})
        dash = "-" * 59
        banner = "" if a.json else f"{dash}\nServer listening on {a.port} (test #1)\n{dash}\n"
        return Outcome(0, "", "", 0.0, banner, hang=True)
    if a.host is None:
        return fail(1, "iperf3: parameter error - must either be a client (-c) or server (-s)\n")
    return _client(ctx, a)


def _client(ctx: Ctx, a: argparse.Namespace) -> Outcome:
    try:
        dst = IPv4Address(a.host)
        bind = IPv4Address(a.bind) if a.bind else None
    except ValueError:
        return _error(ctx, a, f"unable to resolve host {a.host}")
    if bind is not None and routing.own(ctx, bind) is None:
        return _error(ctx, a, "unable to bind to local address: Cannot assign requested address")
    r = routing.route(ctx, dst, bind)
    if r is None:
        return _error(ctx, a, NO_ROUTE, CONNECT_TIMEOUT_S)
    src: Netdev | None = r.dev
    target = src if r.local else (routing.answerer(ctx, src, dst) if src else None)
    if target is None or src is None:
        return _error(ctx, a, NO_ROUTE, CONNECT_TIMEOUT_S)
    server = ctx.rt.listener(target.node, a.port, "iperf3-server", ctx.t)
    if server is not None and target.node != ctx.node.name and ctx.model.node(target.node).firewall:
        # icmp-host-prohibited makes connect() fail with EHOSTUNREACH: "No route to host".
        return _error(ctx, a, NO_ROUTE)
    sargs: argparse.Namespace | None = server.detail["args"] if server else None  # type: ignore[assignment]
    if server is None or sargs is None or (sargs.bind and IPv4Address(sargs.bind) != dst):
        return _error(ctx, a, REFUSED)
    streams = max(1, a.streams)
    key = f"iperf3:{src.node}:{src.name}->{target.node}:{target.name}:P{streams}"
    sender, receiver = (target, src) if a.reverse else (src, target)
    request = FlowRequest("tcp", sender, receiver, streams, key)
    rate = noise.uniform(ctx.seed, 45.0, 60.0, key) if r.local else ctx.rate(request)
    seconds = float(a.seconds)
    mss = min(src.mtu, target.mtu) - 52
    local, remote = str(src.address.ip) if src.address else "", str(dst)
    run = render.TcpRun(
        ctx.node.name,
        KERNEL_RELEASE,
        ARCH,
        local,
        remote,
        a.port,
        streams,
        a.seconds,
        rate,
        mss,
        ctx.t,
        ctx.seed,
        key,
    )
    out = render.client_document(run) if a.json else _client_text(run)
    total = seconds + 0.25
    if not ctx.dry_run:
        if not r.local:
            ctx.flow_done(request, rate, seconds)
        text = render.server_text(a.port, remote, local, seconds, rate)
        if sargs.one_off:
            server.outcome = Outcome(0, text, "", ctx.t + total - server.start)
            server.end = ctx.t + total
            server.finished = True
    return Outcome(0, out, "", total)


def _client_text(run: render.TcpRun) -> str:
    moved = run.gbps * 1e9 / 8 * run.duration_s
    gib = moved / 2**30
    size = f"{gib:.1f} GBytes" if gib < 10 else f"{gib:.0f} GBytes"
    line = f"[SUM]   0.00-{run.duration_s:.2f}  sec  {size}  {run.gbps:.1f} Gbits/sec"
    return (
        f"Connecting to host {run.remote}, port {run.port}\n"
        f"[  5] local {run.local} port 40974 connected to {run.remote} port {run.port}\n"
        "- - - - - - - - - - - - - - - - - - - - - - - - -\n"
        "[ ID] Interval           Transfer     Bitrate         Retr\n"
        f"{line}    0             sender\n{line}                  receiver\n\niperf Done.\n"
    )


TOOLS = {"iperf3": iperf3}
