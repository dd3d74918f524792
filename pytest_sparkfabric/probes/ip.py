"""iproute2 ``ip -j addr show`` / ``ip -j link show``: interfaces, flags, MTU and addresses."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv6Interface, ip_interface
from typing import Any, ClassVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "ip -j"


@dataclass(frozen=True, slots=True)
class IpInterface:
    name: str
    mtu_bytes: int | None
    operstate: str | None
    flags: frozenset[str]
    ipv4: tuple[IPv4Interface, ...]
    ipv6: tuple[IPv6Interface, ...]
    mac: str | None = None
    link_type: str | None = None

    _json_properties: ClassVar[tuple[str, ...]] = ("admin_up", "carrier")

    @property
    def admin_up(self) -> bool:
        return "UP" in self.flags

    @property
    def carrier(self) -> bool:
        return "LOWER_UP" in self.flags


def build_ip_addr(netdevs: Sequence[str] | None = None) -> shell.Command:
    """``ip -j addr show``; with netdevs, one ``ip -j addr show dev X`` per device.

    The per-device form prints one JSON array per device; the parser reads them all. A device
    that does not exist prints nothing on stdout, so it is simply absent from the result.
    """
    if netdevs is None:
        return shell.join(["ip", "-j", "addr", "show"])
    if not netdevs:
        return shell.join(["echo", "[]"])
    return shell.then(shell.join(["ip", "-j", "addr", "show", "dev", dev]) for dev in netdevs)


def _documents(text: str) -> list[object]:
    decoder = json.JSONDecoder()
    docs: list[object] = []
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        try:
            doc, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            raise ParseError(
                TOOL,
                "expected JSON (ip -j; iproute2 older than 4.13 has no -j)",
                found_text(text[i:]),
            ) from None
        docs.append(doc)


def _interface(obj: Mapping[str, Any]) -> IpInterface | None:
    name = obj.get("ifname")
    if not isinstance(name, str):
        # ip -j with an address-family filter prints {} for interfaces it skipped.
        return None
    mtu = obj.get("mtu")
    flags = obj.get("flags")
    ipv4: list[IPv4Interface] = []
    ipv6: list[IPv6Interface] = []
    addr_info = obj.get("addr_info")
    for info in addr_info if isinstance(addr_info, list) else []:
        if not isinstance(info, Mapping):
            continue
        local, prefix = info.get("local"), info.get("prefixlen")
        if not isinstance(local, str) or isinstance(prefix, bool) or not isinstance(prefix, int):
            continue
        try:
            iface = ip_interface(f"{local}/{prefix}")
        except ValueError:
            continue
        if isinstance(iface, IPv4Interface):
            ipv4.append(iface)
        else:
            ipv6.append(iface)
    operstate = obj.get("operstate")
    mac = obj.get("address")
    link_type = obj.get("link_type")
    return IpInterface(
        name=name,
        mtu_bytes=mtu if isinstance(mtu, int) and not isinstance(mtu, bool) else None,
        operstate=operstate if isinstance(operstate, str) else None,
        flags=frozenset(f for f in flags if isinstance(f, str))
        if isinstance(flags, list)
        else frozenset(),
        ipv4=tuple(ipv4),
        ipv6=tuple(ipv6),
        mac=mac if isinstance(mac, str) else None,
        link_type=link_type if isinstance(link_type, str) else None,
    )


def parse_ip_addr_json(text: str) -> tuple[IpInterface, ...]:
    """Every interface in one or more ``ip -j`` JSON arrays (addr or link), in order."""
    out: list[IpInterface] = []
    for doc in _documents(text):
        if not isinstance(doc, list):
            raise ParseError(TOOL, "expected a JSON array of interfaces", f"a {type(doc).__name__}")
        for obj in doc:
            if isinstance(obj, Mapping) and (iface := _interface(obj)) is not None:
                out.append(iface)
    return tuple(out)
