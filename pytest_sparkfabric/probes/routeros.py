"""What a MikroTik RouterOS switch says, as typed values: one dataclass per read, and the
`parse_*` reads of console text or REST JSON (`sparkfabric parse routeros-*`).

Each field names the RouterOS property it comes from, so one mapping (`_from_row`) reads a row
in either form the switch writes it: REST (every value a string: `"true"`, `"9000"`,
`"3884056576"`) or the console (`yes`, `3704.1MiB`, `182 334 805 898`) as `routeros_text.read`
gives it; a check cannot tell which way the switch was read. A property the switch did not
print is None, never 0 or False. The console shows some properties only as flag letters (`R`
running, `H` hw-offload); terse prints no legend, so each menu's is written here, from the
legends RouterOS prints (v6 prints every letter, v7 only those in use).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from pytest_sparkfabric.probes import ParseError, found_text
from pytest_sparkfabric.probes.routeros_text import read

T = TypeVar("T")
N = TypeVar("N", int, float)
Conv = Callable[[str | None], object]
Rows = Sequence[Mapping[str, str]]
_BOOL = {"yes": True, "true": True, "no": False, "false": False}
_ZERO_RATE = re.compile(r"^\s*0+(?:\.0+)?\s*[kKMG]?(?:bps)?\s*$")
# Counter names: MikroTik manual, ethernet.md "Stats" (the list differs per device and
# driver); `tx-drop-packet` as CRS3xx/CRS8xx print it (index ids 60098335007, 60259870987).
_COUNTER_PREFIXES = ("rx-", "tx-", "rs-fec-", "fc-fec-", "driver-")
# `/interface ethernet print`: "Flags: X - disabled, R - running, S - slave" (ntc-templates
# tests/mikrotik_routeros/interface_ethernet_print, RouterOS 6).
ETHERNET_FLAGS = {"X": "disabled", "R": "running", "S": "slave"}
# `/interface bridge port print`: "Flags: X - disabled, I - inactive, D - dynamic, H -
# hw-offload" (MikroTik manual, bridging-and-switching/index.md, bridge port print).
BRIDGE_PORT_FLAGS = {"X": "disabled", "I": "inactive", "D": "dynamic", "H": "hw-offload"}


def _num(pattern: str, of: Callable[[re.Match[str]], N]) -> Callable[[str | None], N | None]:
    """A number the whole value spells by `pattern` (blanks around it allowed), else None."""
    whole = re.compile(rf"^\s*{pattern}\s*$")
    return lambda value: of(m) if (m := whole.match(value or "")) else None


_int = _num(r"(-?\d{1,15})\s*%?", lambda m: int(m[1]))
_rate_gbps = _num(
    r"(\d{1,6}(?:\.\d{1,3})?)\s*([MG])bps", lambda m: float(m[1]) * (1.0 if m[2] == "G" else 0.001)
)
# A counter as REST (`"1503133696"`) or the console (`1 503 133 696`, grouped by three with
# spaces: manual, ethernet.md "Stats") prints it.
_count = _num(r"(\d{1,3}(?: \d{3}){0,6}|\d{1,20})", lambda m: int(m[1].replace(" ", "")))


def _bool(value: str | None) -> bool | None:
    return _BOOL.get((value or "").strip().lower())


def _counters(row: Mapping[str, str]) -> dict[str, int]:
    return {
        k: n
        for k, v in row.items()
        if k.startswith(_COUNTER_PREFIXES) and (n := _count(v)) is not None
    }


def _p(key: str, conv: Conv | None = None) -> Any:
    """A field read from property `key` of a row (a string unless `conv` makes it a value)."""
    return field(default=None, metadata={"key": key, "conv": conv or (lambda v: v)})


def _whole(of: Callable[[Mapping[str, str]], object]) -> Any:
    """A field made from the whole row."""
    return field(default_factory=dict, metadata={"row": of})


def _from_row(cls: Callable[..., T], row: Mapping[str, str]) -> T:
    return cls(
        **{
            f.name: f.metadata["row"](row)
            if "row" in f.metadata
            else f.metadata["conv"](row.get(f.metadata["key"]))
            for f in fields(cls)  # type: ignore[arg-type]
            if f.metadata
        }
    )


@dataclass(frozen=True, slots=True)
class SystemResource:
    cpu_load_pct: int | None = _p("cpu-load", _int)
    version: str | None = _p("version")
    board_name: str | None = _p("board-name")
    uptime: str | None = _p("uptime")
    raw: Mapping[str, str] = _whole(dict)


@dataclass(frozen=True, slots=True)
class EthernetMonitor:
    name: str | None = _p("name")
    status: str | None = _p("status")
    rate_gbps: float | None = _p("rate", _rate_gbps)
    auto_negotiation: str | None = _p("auto-negotiation")
    fec: str | None = _p("fec")
    raw: Mapping[str, str] = _whole(dict)

    @property
    def link_ok(self) -> bool:
        return self.status == "link-ok"


@dataclass(frozen=True, slots=True)
class EthernetPort:
    """An `/interface ethernet print` item (`GET /rest/interface/ethernet`)."""

    name: str | None = _p("name")
    mtu_bytes: int | None = _p("mtu", _int)
    l2mtu_bytes: int | None = _p("l2mtu", _int)
    auto_negotiation: bool | None = _p("auto-negotiation", _bool)
    speed: str | None = _p("speed")
    running: bool | None = _p("running", _bool)
    disabled: bool | None = _p("disabled", _bool)


@dataclass(frozen=True, slots=True)
class BridgePort:
    """An `/interface bridge port print` item. ``hw`` is the request; ``hw-offload`` the fact."""

    interface: str | None = _p("interface")
    bridge: str | None = _p("bridge")
    hw_requested: bool | None = _p("hw", _bool)
    hw_offload: bool | None = _p("hw-offload", _bool)
    role: str | None = _p("role")
    disabled: bool | None = _p("disabled", _bool)


@dataclass(frozen=True, slots=True)
class QosPort:
    """An `/interface ethernet switch qos port print` item."""

    name: str | None = _p("name")
    trust_l3: str | None = _p("trust-l3")
    pfc: str | None = _p("pfc")
    egress_rate_queues: Mapping[int, str] = _whole(
        lambda row: dict(
            sorted(
                (int(m[1]), v)
                for k, v in row.items()
                if (m := re.fullmatch(r"egress-rate-queue(\d{1,2})", k))
            )
        )
    )

    def limited_queues(self) -> dict[int, str]:
        """Queues with an egress rate cap set: anything but empty, unset (`!`) or a zero rate
        (`0`, and `0bps` as the console prints an uncapped queue, index id 60378854232)."""
        return {
            q: r
            for q, r in self.egress_rate_queues.items()
            if r.strip() and not r.strip().startswith("!") and not _ZERO_RATE.match(r)
        }


@dataclass(frozen=True, slots=True)
class EthernetStats:
    """`/interface ethernet print stats` of one interface. A counter the device does not
    print is absent (RS-FEC counters exist only in fec91 mode, rx-drop only on some chips)."""

    name: str | None = _p("name")
    counters: Mapping[str, int] = _whole(_counters)
    """Every counter printed (rx-*, tx-*, rs-fec-*, fc-fec-*, driver-*), by its RouterOS name."""


def _rows_to(cls: Callable[..., T]) -> Callable[[Rows], tuple[T, ...]]:
    return lambda rows: tuple(_from_row(cls, r) for r in rows)


def _item(cls: Callable[..., T], what: str, *keys: str) -> Callable[[Mapping[str, str]], T]:
    def item(row: Mapping[str, str]) -> T:
        if not any(k in row for k in keys):
            raise ParseError(what, f"no {' or '.join(map(repr, keys))} property")
        return _from_row(cls, row)

    return item


# Rows of a read (REST's or `routeros_text.read`'s) as typed values.
system_resource_from_kv = _item(
    SystemResource, "routeros /system resource", "cpu-load", "version", "board-name"
)
ethernet_monitor_from_kv = _item(EthernetMonitor, "routeros monitor", "name", "status")
ethernet_from_rest = _rows_to(EthernetPort)
bridge_ports_from_rest = _rows_to(BridgePort)
qos_ports_from_rest = _rows_to(QosPort)
ethernet_stats_from_rows = _rows_to(EthernetStats)


def _read(
    what: str, build: Callable[[Rows], T], problem: Callable[[Rows], str], flags: Any = None
) -> Callable[[str], T]:
    """The parser of one read: `routeros_text.read`, then `build` unless `problem` names one
    (or `build` refuses): a ParseError quoting the text."""

    def parse(text: str) -> T:
        rows = read(text, what, flags)
        try:
            if why := problem(rows):
                raise ParseError(what, why)
            return build(rows)
        except ParseError as err:
            raise ParseError(err.tool, err.missing, found_text(text)) from None

    return parse


def _lacks(key: str) -> Callable[[Rows], str]:
    return lambda rows: "" if any(key in r for r in rows) else f"no item has the property {key!r}"


# Each in any form the console prints, or the REST reply of the same read.
parse_ethernet = _read(
    "routeros /interface ethernet print", ethernet_from_rest, _lacks("name"), ETHERNET_FLAGS
)
parse_bridge_ports = _read(
    "routeros /interface bridge port print",
    bridge_ports_from_rest,
    _lacks("interface"),
    BRIDGE_PORT_FLAGS,
)
parse_qos_ports = _read(
    "routeros /interface ethernet switch qos port print", qos_ports_from_rest, _lacks("name")
)
parse_routeros_monitors = _read(
    "routeros monitor",
    lambda rows: tuple(map(ethernet_monitor_from_kv, rows)),
    lambda rows: "" if rows else "empty reply",
)
"""`/interface ethernet monitor IF[,IF...] once`: one monitor per column."""
parse_system_resource = _read(
    "routeros /system resource",
    lambda rows: system_resource_from_kv(rows[0]),
    lambda rows: "" if len(rows) == 1 else f"{len(rows)} items where the menu has one",
)
parse_ethernet_stats = _read(
    "routeros /interface ethernet print stats",
    ethernet_stats_from_rows,
    lambda rows: (
        "" if any(map(_counters, rows)) else "no counter (rx-*, tx-*, rs-fec-*) in the output"
    ),
)


def parse_routeros_monitor(text: str) -> EthernetMonitor:
    """One interface's `monitor ... once` (the read the suite makes per leg)."""
    monitors = parse_routeros_monitors(text)
    if len(monitors) != 1:
        names = ", ".join(m.name or "?" for m in monitors)
        raise ParseError(
            "routeros monitor", f"{len(monitors)} interfaces ({names}) where one was asked for"
        )
    return monitors[0]
