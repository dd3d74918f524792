"""iputils ping over the simulated fabric: DF pings, local MTU errors, path MTU black holes."""

from __future__ import annotations

import argparse
import functools
import math
from ipaddress import IPv4Address

from sparkfabric_sim import noise, routing
from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.render import ping as render
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.world import Ctx

DEFAULT_WAIT_S = 10.0
ARP_FAIL_S = 3.0
BASE_RTT_MS = 0.16


INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


class _Usage(Exception):
    """iputils error(): the message and the exit status it exits with."""

    def __init__(self, message: str, rc: int) -> None:
        super().__init__(message)
        self.rc = rc


def _strtol(text: str, lo: int, hi: int) -> int:
    # iputils_common.c strtol_or_err (20240117 L71-90): a whole decimal number within [lo, hi],
    # else "invalid argument" and exit 1 (EXIT_FAILURE).
    try:
        value = int(text, 10) if text.strip() == text and text else None
    except ValueError:
        value = None
    if value is None:
        raise _Usage(f"ping: invalid argument: '{text}'", 1)
    if not lo <= value <= hi:
        raise _Usage(f"ping: invalid argument: '{text}': out of range: {lo} <= value <= {hi}", 1)
    return value


def _strtod(text: str, what: str) -> float:
    # ping.c -i / -W (20240117 L439-447, L553-560): a float within [0, INT_MAX/1000], else exit 2.
    try:
        value = float(text)
    except ValueError:
        raise _Usage(f"ping: {what}: {text}", 2) from None
    if value < 0 or value > INT_MAX / 1000:
        raise _Usage(f"ping: {what}: {text}", 2)
    return value


def _checked(a: argparse.Namespace) -> argparse.Namespace:
    if a.pmtu not in (None, "do", "dont", "want", "probe"):
        raise _Usage(f"ping: invalid -M argument: {a.pmtu}", 2)
    a.size = _strtol(a.size, 0, INT_MAX) if isinstance(a.size, str) else a.size
    a.count = _strtol(a.count, 1, LONG_MAX) if a.count is not None else None
    a.deadline = _strtol(a.deadline, 0, INT_MAX) if a.deadline is not None else None
    a.wait = _strtod(a.wait, "bad linger time") if a.wait is not None else None
    a.interval = _strtod(a.interval, "bad timing interval") if isinstance(a.interval, str) else 1.0
    return a


@functools.cache  # built once: parse_args leaves a parser unchanged
def _parser() -> Parser:
    p = Parser("ping")
    p.add_argument("-M", dest="pmtu")
    p.add_argument("-s", dest="size", default=56)
    p.add_argument("-I", dest="iface")
    p.add_argument("-c", dest="count")
    p.add_argument("-W", dest="wait")
    p.add_argument("-w", dest="deadline")
    p.add_argument("-i", dest="interval")
    for flag in ("-q", "-n", "-4", "-D", "-O", "-A", "-U", "-v"):
        p.add_argument(flag, action="store_true", dest=flag[1:].replace("4", "v4"))
    p.add_argument("dst")
    return p


def ping(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _checked(_parser().parse_args(argv[1:]))
        dst = IPv4Address(a.dst)
    except _Usage as exc:
        return fail(exc.rc, f"{exc}\n")
    except ArgError as exc:
        return fail(2, f"ping: {exc.message}\n")
    except ValueError:
        return fail(2, f"ping: {a.dst}: Name or service not known\n")
    src = None
    if a.iface is not None:
        src = routing.by_name_or_address(ctx, a.iface)
        if src is None:
            return fail(2, f"ping: SO_BINDTODEVICE {a.iface}: No such device\n")
    r = routing.route(ctx, dst) if src is None else routing.Route(src, False)
    if r is None:
        return fail(2, "ping: connect: Network is unreachable\n")
    count = a.count
    if count is None and a.deadline is None:
        return Outcome(0, hang=True, partial=render.header(str(dst), None, None, a.size))
    sent = count if count is not None else max(1, int(a.deadline / a.interval) + 1)
    if a.deadline is not None:
        sent = min(sent, max(1, math.floor(a.deadline / a.interval) + 1))
    wire = a.size + 28
    source = str(r.dev.address.ip) if r.dev and r.dev.address else None
    named = a.iface if a.iface is not None and ctx.node.netdev(a.iface) else None
    head = render.header(str(dst), source if a.iface else None, named, a.size)
    dev = r.dev
    if r.local or dev is None:
        return _result(ctx, a, head, dst, sent, sent, 0, [], local=True)
    if a.pmtu == "do" and wire > dev.mtu:
        errors = "" if a.q else render.local_mtu_error(dev.mtu) * sent
        out = _result(ctx, a, head, dst, sent, 0, 0, [], local=True)
        return Outcome(out.rc, out.stdout, errors, out.duration_s)
    peer = routing.answerer(ctx, dev, dst)
    if peer is None:
        lines = "" if a.q else "".join(render.unreachable(source or "", i + 1) for i in range(sent))
        return _result(ctx, a, head + lines, dst, sent, 0, sent, [], arp_failed=True)
    if a.pmtu == "do" and wire > ctx.rt.path_mtu(dev, peer):
        return _result(ctx, a, head, dst, sent, 0, 0, [])
    rtts = [
        BASE_RTT_MS
        + wire * 8 / 100e9 * 2e3
        + noise.uniform(ctx.seed, 0.0, 0.08, "ping", dev.node, dev.name, str(dst), a.size, i)
        for i in range(sent)
    ]
    lines = (
        "" if a.q else "".join(render.reply(str(dst), a.size, i + 1, r) for i, r in enumerate(rtts))
    )
    return _result(ctx, a, head + lines, dst, sent, sent, 0, rtts)


def _result(
    ctx: Ctx,
    a: argparse.Namespace,
    head: str,
    dst: IPv4Address,
    sent: int,
    received: int,
    errors: int,
    rtts: list[float],
    *,
    local: bool = False,
    arp_failed: bool = False,
) -> Outcome:
    interval, deadline, wait = float(a.interval), a.deadline, a.wait
    span = (sent - 1) * interval
    if received == sent:
        duration = span + (max(rtts) / 1000 if rtts else 0.0)
    elif arp_failed:
        duration = span + ARP_FAIL_S
    elif local:
        duration = span
    else:
        duration = span + (wait if wait is not None else DEFAULT_WAIT_S)
    if deadline is not None and received < sent:
        duration = max(duration, float(deadline)) if not local else duration
        duration = min(duration, float(deadline))
    stats = render.statistics(str(dst), sent, received, errors, round(span * 1000 + 3), rtts)
    rc = 0 if received and (deadline is None or received >= sent) else 1
    return Outcome(rc, head + stats, "", duration)


TOOLS = {"ping": ping}
