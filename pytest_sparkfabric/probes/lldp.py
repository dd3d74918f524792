"""lldpd's `lldpctl` / `lldpcli show neighbors` (src/client/text_writer.c): who is on the other
end of each port; neighbours told apart by `Interface:` and fields by name (pastes reindent)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

_INTERFACE = re.compile(
    r"^\s*Interface:\s*(?P<port>[^,\s]+),\s*via:\s*[^,]+?(?:,\s*RID:\s*\d+)?"
    r"(?:,\s*Time:\s*.*?)?\s*$"
)
_FIELD = re.compile(r"^\s*(?P<key>[A-Za-z][\w -]*?):\s*(?P<value>.*?)\s*$")
_MAC = re.compile(r"^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$")
_SECTIONS = {"Chassis", "Port", "VLAN", "LLDP-MED", "Unknown TLVs", "PMD autoneg"}


@dataclass(frozen=True, slots=True)
class LldpNeighbor:
    """One neighbour seen on ``local_port``; ``chassis_id``/``port_id`` keep lldpd's subtype
    word (``mac``, ``ifname``, ``local``, ``ip``) apart from the identifier itself."""

    local_port: str
    chassis_id_type: str | None
    chassis_id: str | None
    system_name: str | None
    port_id_type: str | None
    port_id: str | None
    port_description: str | None

    _json_properties: ClassVar[tuple[str, ...]] = ("neighbor_mac", "port_name")

    @property
    def neighbor_mac(self) -> str | None:
        """The neighbour's MAC: the port ID when it is a MAC, else the chassis ID when it is."""
        ids = ((self.port_id_type, self.port_id), (self.chassis_id_type, self.chassis_id))
        return next((v.lower() for k, v in ids if k == "mac" and v and _MAC.match(v)), None)

    @property
    def port_name(self) -> str | None:
        """The far end's port name: an ``ifname``/``local`` port ID, without the bridge of
        RouterOS's ``bridge/ether2`` (a first part with no digit is a bridge name, while
        ``GigabitEthernet1/1`` or ``ge-0/0/38.0`` are whole names), else the description."""
        if self.port_id_type in ("ifname", "local") and self.port_id:
            head, _, tail = self.port_id.partition("/")
            if tail and "/" not in tail and not any(ch.isdigit() for ch in head):
                return tail
            return self.port_id
        return self.port_description or self.port_id


@dataclass(frozen=True, slots=True)
class LldpNeighbors:
    neighbors: tuple[LldpNeighbor, ...]

    def on(self, local_port: str) -> tuple[LldpNeighbor, ...]:
        return tuple(n for n in self.neighbors if n.local_port == local_port)


def build_lldpctl() -> shell.Command:
    return shell.join(["lldpctl"])


def _split_id(value: str) -> tuple[str | None, str | None]:
    if not value:
        return None, None
    kind, _, ident = value.partition(" ")
    return (kind, ident.strip() or None) if ident else (None, kind)


def _neighbor(port: str, pairs: list[tuple[str, str]]) -> LldpNeighbor:
    f = dict(reversed(pairs))  # the first of a repeated key wins
    return LldpNeighbor(
        port,
        *_split_id(f.get("ChassisID", "")),
        f.get("SysName") or None,
        *_split_id(f.get("PortID", "")),
        f.get("PortDescr") or None,
    )


def parse_lldpctl(text: str) -> LldpNeighbors:
    found: list[tuple[str, list[tuple[str, str]]]] = []
    seen_header = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("LLDP neighbors:", "LLDP interfaces:"):
            seen_header = True
        elif m := _INTERFACE.match(line):
            found.append((m.group("port"), []))
        elif not found or not stripped or set(stripped) <= {"-"}:
            continue
        elif (m := _FIELD.match(line)) and not line.startswith(" " * 18):
            key, value = m.group("key"), m.group("value")
            if value or key not in _SECTIONS:
                found[-1][1].append((key, value))
    if not found and not seen_header:
        raise ParseError(
            "lldpctl",
            "expected 'LLDP neighbors:' and 'Interface: <port>, via: ...' lines (is lldpd "
            "running?)",
            found_text(text),
        )
    return LldpNeighbors(tuple(_neighbor(*n) for n in found))
