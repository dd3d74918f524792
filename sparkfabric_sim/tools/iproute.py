"""`ip` (iproute2 6.1): addr, link and route show, text, `-o` and `-j` forms."""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv6Address

from pytest_sparkfabric.cluster import hardware
from sparkfabric_sim import gids
from sparkfabric_sim.hardware import eui64_link_local
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.render import ip as render
from sparkfabric_sim.render.ip import IfView, Inet6, Route
from sparkfabric_sim.world import Ctx

OBJECTS = {
    "a": "addr",
    "addr": "addr",
    "address": "addr",
    "l": "link",
    "link": "link",
    "r": "route",
    "ro": "route",
    "route": "route",
}
SHOW = {"show", "list", "lst", "sh", "ls", "s"}


def views(ctx: Ctx) -> list[IfView]:
    n = ctx.node
    lo = IfView(
        1,
        "lo",
        ("LOOPBACK", "UP", "LOWER_UP"),
        65536,
        "noqueue",
        "UNKNOWN",
        "loopback",
        "00:00:00:00:00:00",
        "00:00:00:00:00:00",
        (IPv4Interface("127.0.0.1/8"),),
        (Inet6(IPv6Address("::1"), 128, "host"),),
    )
    mgmt = IfView(
        2,
        hardware.MGMT_NETDEV,
        ("BROADCAST", "MULTICAST", "UP", "LOWER_UP"),
        1500,
        "mq",
        "UP",
        "ether",
        n.mgmt.mac,
        "ff:ff:ff:ff:ff:ff",
        (n.mgmt.address,),
        (Inet6(eui64_link_local(n.mgmt.mac), 64, "link"),),
    )
    out = [lo, mgmt]
    for dev in n.netdevs:
        up = ctx.rt.carrier(dev, ctx.t)
        flags = (
            ("BROADCAST", "MULTICAST", "UP", "LOWER_UP")
            if up
            else ("NO-CARRIER", "BROADCAST", "MULTICAST", "UP")
        )
        inet6 = (Inet6(gids.stable_link_local(ctx.seed, dev), 64, "link"),) if dev.ipv6 else ()
        out.append(
            IfView(
                dev.ifindex,
                dev.name,
                flags,
                dev.mtu,
                "mq",
                "UP" if up else "DOWN",
                "ether",
                dev.mac,
                "ff:ff:ff:ff:ff:ff",
                (dev.address,) if dev.address is not None else (),
                inet6,
            )
        )
    return out


def routes(ctx: Ctx) -> list[Route]:
    n = ctx.node
    gw = str(next(n.mgmt.address.network.hosts()))
    out = [
        Route("default", hardware.MGMT_NETDEV, None, 100, gateway=gw),
        Route(str(n.mgmt.address.network), hardware.MGMT_NETDEV, str(n.mgmt.address.ip), 100),
    ]
    for i, dev in enumerate(n.netdevs):
        if dev.address is not None:
            down = not ctx.rt.carrier(dev, ctx.t)
            out.append(
                Route(
                    str(dev.address.network), dev.name, str(dev.address.ip), 101 + i, linkdown=down
                )
            )
    return out


def ip(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    as_json = oneline = False
    family: str | None = None
    while args and args[0].startswith("-"):
        opt = args.pop(0).lstrip("-")
        if opt in ("j", "json"):
            as_json = True
        elif opt in ("o", "oneline"):
            oneline = True
        elif opt == "4":
            family = "inet"
        elif opt == "6":
            family = "inet6"
        elif opt in ("f", "family") and args:
            family = {"inet": "inet", "inet6": "inet6"}.get(args.pop(0))
        elif opt not in ("p", "pretty", "s", "stats", "d", "details", "c", "color", "n"):
            return fail(255, f'Option "-{opt}" is unknown, try "ip -help".\n')
    if not args:
        return fail(255, "Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n")
    obj = OBJECTS.get(args.pop(0))
    if obj is None:
        return fail(255, f'Object "{argv[len(argv) - len(args) - 1]}" is unknown, try "ip help".\n')
    if args and args[0] in SHOW:
        args.pop(0)
    dev = None
    while args:
        word = args.pop(0)
        if word == "dev" and args:
            dev = args.pop(0)
        elif word in ("scope", "table", "label", "to", "type") and args:
            args.pop(0)
        elif word not in ("up", "all"):
            dev = word
    if obj == "route":
        rs = [r for r in routes(ctx) if dev is None or r.dev == dev]
        if dev is not None and all(v.name != dev for v in views(ctx)):
            return fail(1, f'Cannot find device "{dev}"\n')
        return ok(render.route_json(rs) if as_json else render.route_text(rs))
    vs = views(ctx)
    if dev is not None:
        vs = [v for v in vs if v.name == dev]
        if not vs:
            return fail(1, f'Device "{dev}" does not exist.\n')
    if obj == "link":
        return ok(render.link_json(vs) if as_json else render.link_text(vs, oneline))
    return ok(render.addr_json(vs, family) if as_json else render.addr_text(vs, family, oneline))


TOOLS = {"ip": ip}
