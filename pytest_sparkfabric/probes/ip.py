"""iproute2 ``ip -j addr show`` / ``ip -j link show``: interfaces, flags, MTU and addresses."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv6Interface, ip_interface
from typing import Any, ClassVar, TypeVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "ip -j"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class IpInterface:
    name: str
    mtu_bytes: int | None
    operstate: str | None
    flags: frozenset[str]
    ipv4: tuple[IPv4Interface, ...]
    ipv6: tuple[IPv6Interface, ...]
    mac: str | None = None

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


def _of(obj: Mapping[str, Any], key: str, kind: type[T]) -> T | None:
    value = obj.get(key)
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def _interface(obj: Mapping[str, Any]) -> IpInterface | None:
    name = _of(obj, "ifname", str)
    if name is None:
        # ip -j with an address-family filter prints {} for interfaces it skipped.
        return None
    addresses: list[IPv4Interface | IPv6Interface] = []
    for info in _of(obj, "addr_info", list) or []:
        if not isinstance(info, Mapping):
            continue
        local, prefix = _of(info, "local", str), _of(info, "prefixlen", int)
        if local is not None and prefix is not None:
            with contextlib.suppress(ValueError):
                addresses.append(ip_interface(f"{local}/{prefix}"))
    flags = frozenset(f for f in _of(obj, "flags", list) or [] if isinstance(f, str))
    return IpInterface(
        name,
        _of(obj, "mtu", int),
        _of(obj, "operstate", str),
        flags,
        tuple(a for a in addresses if isinstance(a, IPv4Interface)),
        tuple(a for a in addresses if isinstance(a, IPv6Interface)),
        _of(obj, "address", str),
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
