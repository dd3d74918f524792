"""Which netdev a node sends from, and which netdev answers an address (ARP over live links)."""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address

from sparkfabric_sim.hardware import Netdev
from sparkfabric_sim.world import Ctx


@dataclass(frozen=True, slots=True)
class Route:
    """`dev` is None for a destination that is one of the node's own addresses."""

    dev: Netdev | None
    local: bool


def own(ctx: Ctx, ip: IPv4Address) -> Netdev | None:
    return next((d for d in ctx.node.netdevs if d.address is not None and d.address.ip == ip), None)


def route(ctx: Ctx, dst: IPv4Address, bind: IPv4Address | None = None) -> Route | None:
    """The fabric netdev traffic to `dst` leaves by (connected routes only), or None."""
    if own(ctx, dst) is not None or dst == ctx.node.mgmt.address.ip:
        return Route(own(ctx, dst), True)
    for dev in ctx.node.netdevs:
        if dev.address is None or dst not in dev.address.network:
            continue
        if bind is None or dev.address.ip == bind:
            return Route(dev, False)
    return None


def by_name_or_address(ctx: Ctx, text: str) -> Netdev | None:
    dev = ctx.node.netdev(text)
    if dev is not None:
        return dev
    try:
        return own(ctx, IPv4Address(text))
    except ValueError:
        return None


def answerer(ctx: Ctx, src: Netdev, dst: IPv4Address) -> Netdev | None:
    """The netdev that answers ARP for `dst` on `src`'s wire right now."""
    for dev in ctx.model.owners(dst):
        if dev is not src and ctx.rt.reachable(src, dev, ctx.t):
            return dev
    return None
