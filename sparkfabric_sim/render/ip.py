"""iproute2 output: `ip -j addr/link show` (one compact JSON line) and the text forms."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv6Address

FOREVER = 4294967295


@dataclass(frozen=True, slots=True)
class Inet6:
    address: IPv6Address
    prefixlen: int
    scope: str


@dataclass(frozen=True, slots=True)
class IfView:
    ifindex: int
    name: str
    flags: tuple[str, ...]
    mtu: int
    qdisc: str
    operstate: str
    link_type: str
    address: str
    broadcast: str
    inet: tuple[IPv4Interface, ...] = ()
    inet6: tuple[Inet6, ...] = ()

    @property
    def loopback(self) -> bool:
        return self.link_type == "loopback"


def _inet_json(v: IfView, a: IPv4Interface) -> dict[str, object]:
    out: dict[str, object] = {
        "family": "inet",
        "local": str(a.ip),
        "prefixlen": a.network.prefixlen,
    }
    if not v.loopback:
        out["broadcast"] = str(a.network.broadcast_address)
    out["scope"] = "host" if v.loopback else "global"
    if not v.loopback:
        out["noprefixroute"] = True
    out["label"] = v.name
    out["valid_life_time"] = FOREVER
    out["preferred_life_time"] = FOREVER
    return out


def _inet6_json(a: Inet6) -> dict[str, object]:
    return {
        "family": "inet6",
        "local": str(a.address),
        "prefixlen": a.prefixlen,
        "scope": a.scope,
        "noprefixroute": True,
        "valid_life_time": FOREVER,
        "preferred_life_time": FOREVER,
    }


def _head(v: IfView, with_mode: bool) -> dict[str, object]:
    out: dict[str, object] = {
        "ifindex": v.ifindex,
        "ifname": v.name,
        "flags": list(v.flags),
        "mtu": v.mtu,
        "qdisc": v.qdisc,
        "operstate": v.operstate,
    }
    if with_mode:
        out["linkmode"] = "DEFAULT"
    out.update(
        group="default",
        txqlen=1000,
        link_type=v.link_type,
        address=v.address,
        broadcast=v.broadcast,
    )
    return out


def addr_json(views: Sequence[IfView], family: str | None = None) -> str:
    docs = []
    for v in views:
        d = _head(v, with_mode=False)
        info: list[dict[str, object]] = []
        if family in (None, "inet"):
            info += [_inet_json(v, a) for a in v.inet]
        if family in (None, "inet6"):
            info += [_inet6_json(a) for a in v.inet6]
        d["addr_info"] = info
        docs.append(d)
    return json.dumps(docs, separators=(",", ":")) + "\n"


def link_json(views: Sequence[IfView]) -> str:
    return json.dumps([_head(v, with_mode=True) for v in views], separators=(",", ":")) + "\n"


def _first_line(v: IfView, with_mode: bool) -> str:
    mode = " mode DEFAULT" if with_mode else ""
    return (
        f"{v.ifindex}: {v.name}: <{','.join(v.flags)}> mtu {v.mtu} qdisc {v.qdisc} "
        f"state {v.operstate}{mode} group default qlen 1000"
    )


def _ether_line(v: IfView) -> str:
    return f"    link/{v.link_type} {v.address} brd {v.broadcast}"


def addr_text(views: Sequence[IfView], family: str | None = None, oneline: bool = False) -> str:
    lines = []
    for v in views:
        block = [_first_line(v, with_mode=False), _ether_line(v)]
        if family in (None, "inet"):
            for a in v.inet:
                if v.loopback:
                    block.append(f"    inet {a.with_prefixlen} scope host {v.name}")
                else:
                    block.append(
                        f"    inet {a.with_prefixlen} brd {a.network.broadcast_address} "
                        f"scope global noprefixroute {v.name}"
                    )
                block.append("       valid_lft forever preferred_lft forever")
        if family in (None, "inet6"):
            for b in v.inet6:
                block.append(f"    inet6 {b.address}/{b.prefixlen} scope {b.scope} noprefixroute ")
                block.append("       valid_lft forever preferred_lft forever")
        lines.append(" \\".join(block) if oneline else "\n".join(block))
    return "".join(line + "\n" for line in lines)


def link_text(views: Sequence[IfView], oneline: bool = False) -> str:
    out = []
    for v in views:
        block = [_first_line(v, with_mode=True), _ether_line(v)]
        out.append(" \\".join(block) if oneline else "\n".join(block))
    return "".join(line + "\n" for line in out)


@dataclass(frozen=True, slots=True)
class Route:
    dst: str
    dev: str
    prefsrc: str | None
    metric: int
    gateway: str | None = None
    linkdown: bool = False


def route_text(routes: Sequence[Route]) -> str:
    out = []
    for r in routes:
        if r.gateway:
            text = f"default via {r.gateway} dev {r.dev} proto static metric {r.metric} "
        else:
            text = f"{r.dst} dev {r.dev} proto kernel scope link src {r.prefsrc} metric {r.metric} "
        out.append(text + ("linkdown " if r.linkdown else ""))
    return "".join(line + "\n" for line in out)


def route_json(routes: Sequence[Route]) -> str:
    docs: list[dict[str, object]] = []
    for r in routes:
        flags = ["linkdown"] if r.linkdown else []
        if r.gateway:
            docs.append(
                {
                    "dst": "default",
                    "gateway": r.gateway,
                    "dev": r.dev,
                    "protocol": "static",
                    "metric": r.metric,
                    "flags": flags,
                }
            )
        else:
            docs.append(
                {
                    "dst": r.dst,
                    "dev": r.dev,
                    "protocol": "kernel",
                    "scope": "link",
                    "prefsrc": r.prefsrc,
                    "metric": r.metric,
                    "flags": flags,
                }
            )
    return json.dumps(docs, separators=(",", ":")) + "\n"
