"""iperf3 3.16: `-s [-1]` servers in the background, `-c HOST -P N -t T [-J] [-B ADDR]` clients."""

from __future__ import annotations

import argparse
import functools
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
USAGE = "Usage: iperf3 [-s|-c host] [options]\nTry `iperf3 --help' for more information.\n"
NO_ROUTE = REFUSED.replace("Connection refused", "No route to host")


@functools.cache  # built once: parse_args leaves a parser unchanged
def _parser() -> Parser:
    p = Parser("iperf3")
    p.add_argument("-s", "--server", action="store_true")
    p.add_argument("-c", "--client", dest="host")
    p.add_argument("-p", "--port", type=int, default=DEFAULT_PORT)
    p.add_argument("-1", "--one-off", dest="one_off", action="store_true")
    p.add_argument("-B", "--bind", dest="bind")
    p.add_argument("-P", "--parallel", dest="streams")
    p.add_argument("-t", "--time", dest="seconds")
    p.add_argument("-J", "--json", dest="json", action="store_true")
    p.add_argument("-R", "--reverse", action="store_true")
    for opt in ("-i", "-O", "-l", "-w", "-A", "-C", "--logfile", "-M"):
        p.add_argument(opt, dest=opt.lstrip("-"))
    for flag in ("-Z", "-V", "--forceflush", "-D", "-N", "-u", "--get-server-output"):
        p.add_argument(flag, action="store_true", dest=flag.lstrip("-").replace("-", "_"))
    return p


MAX_TIME_S = 86400
MAX_STREAMS = 128
# iperf_api.c iperf_parse_arguments (3.16 L1196-1640): options that set server_flag or
# client_flag, checked against the role once all are read.
_SERVER_ONLY = ("one_off", "D")
_CLIENT_ONLY = ("seconds", "streams", "reverse", "l", "w", "u", "Z", "O", "get_server_output")


def _atoi(text: str) -> int:
    digits = ""
    for ch in text.strip():
        if not (ch.isdigit() or (not digits and ch in "+-")):
            break
        digits += ch
    try:
        return int(digits)
    except ValueError:
        return 0


def _arguments(argv: list[str]) -> argparse.Namespace | str:
    """The parsed options, or iperf's parameter error text (iperf_error.c strings)."""
    if "-s" in argv[1:] and "-c" in argv[1:]:
        return "cannot be both server and client"
    a = _parser().parse_args(argv[1:])
    role = "s" if a.server else ("c" if a.host is not None else None)
    given = {k for k, v in vars(a).items() if v not in (None, False)}
    if role == "c" and given & set(_SERVER_ONLY):
        return "some option you are trying to set is server only"
    if role == "s" and given & set(_CLIENT_ONLY):
        return "some option you are trying to set is client only"
    a.seconds = _atoi(a.seconds) if a.seconds is not None else 10
    if a.seconds > MAX_TIME_S:
        return f"test duration too long (maximum = {MAX_TIME_S} seconds)"
    a.streams = _atoi(a.streams) if a.streams is not None else 1
    if a.streams > MAX_STREAMS:
        return f"number of parallel streams too large (maximum = {MAX_STREAMS})"
    return a


def _error(ctx: Ctx, a: argparse.Namespace, message: str, seconds: float = 0.01) -> Outcome:
    if a.json:
        doc = render.error_document(ctx.node.name, KERNEL_RELEASE, ARCH, message)
        return Outcome(1, doc, "", seconds)
    return Outcome(1, "", f"iperf3: error - {message}\n", seconds)


def iperf3(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        parsed = _arguments(argv)
    except ArgError as exc:
        return fail(1, f"iperf3: parameter error - {exc.message}\n")
    if isinstance(parsed, str):
        # main.c L119-123: the message, a blank line, the usage line, exit 1.
        return fail(1, f"iperf3: parameter error - {parsed}\n\n{USAGE}")
    a = parsed
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
    if ctx.changes():
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
