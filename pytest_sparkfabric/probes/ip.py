"""iproute2 ``ip -j addr show`` / ``ip -j link show``: interfaces, flags, MTU and addresses."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
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


def build_ip_addr() -> shell.Command:
    return shell.join(["ip", "-j", "addr", "show"])


def _documents(text: str) -> Iterator[object]:
    decoder, i = json.JSONDecoder(), 0
    while (i := len(text) - len(text[i:].lstrip())) < len(text):
        try:
            doc, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            raise ParseError(
                TOOL,
                "expected JSON (ip -j; iproute2 older than 4.13 has no -j)",
                found_text(text[i:]),
            ) from None
        yield doc


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
        info = info if isinstance(info, Mapping) else {}
        local, prefix = _of(info, "local", str), _of(info, "prefixlen", int)
        if local is not None and prefix is not None:
            with contextlib.suppress(ValueError):
                addresses.append(ip_interface(f"{local}/{prefix}"))
    return IpInterface(
        name,
        _of(obj, "mtu", int),
        frozenset(f for f in _of(obj, "flags", list) or [] if isinstance(f, str)),
        tuple(a for a in addresses if isinstance(a, IPv4Interface)),
        tuple(a for a in addresses if isinstance(a, IPv6Interface)),
        _of(obj, "address", str),
    )


def parse_ip_addr_json(text: str) -> tuple[IpInterface, ...]:
    """Every interface in one or more ``ip -j`` JSON arrays (addr or link), in order."""
    out: list[IpInterface] = []
    for doc in list(_documents(text)):
        if not isinstance(doc, list):
            raise ParseError(TOOL, "expected a JSON array of interfaces", f"a {type(doc).__name__}")
        out += [i for obj in doc if isinstance(obj, Mapping) and (i := _interface(obj))]
    return tuple(out)
