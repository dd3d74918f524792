"""The switch reads, from whatever form the switch answered in: REST JSON, or the console's
terse, detail, column-table, key: value or as-value text. Each gives the dataclass the REST read
gives (`routeros`), so a check cannot tell which way the switch was read.

The console shows some properties only as flag letters (`R` running, `H` hw-offload): a letter
the row does not carry is `false`, as REST says it. The letters come from the output's own
`Flags:` legend where it prints one; terse prints none, so each menu's legend is written here,
from the legends RouterOS prints (v6 prints every letter, v7 only those in use).
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_sparkfabric.probes import ParseError, found_text
from pytest_sparkfabric.probes.routeros import (
    BridgePort,
    EthernetMonitor,
    EthernetPort,
    EthernetStats,
    QosPort,
    SystemResource,
    bridge_ports_from_rest,
    ethernet_from_rest,
    ethernet_monitor_from_kv,
    ethernet_stats_from_rows,
    qos_ports_from_rest,
    system_resource_from_kv,
)
from pytest_sparkfabric.probes.routeros_table import has_table, parse_legend, parse_table
from pytest_sparkfabric.probes.routeros_text import (
    FLAGS,
    Row,
    check_failure,
    is_as_value,
    looks_like_json,
    parse_as_value,
    parse_kv_columns,
    parse_rest_json,
    parse_terse,
)

# `/interface ethernet print`: "Flags: X - disabled, R - running, S - slave" (ntc-templates
# tests/mikrotik_routeros/interface_ethernet_print, RouterOS 6).
ETHERNET_FLAGS: Mapping[str, str] = {"X": "disabled", "R": "running", "S": "slave"}
# `/interface bridge port print`: "Flags: X - disabled, I - inactive, D - dynamic, H -
# hw-offload" (MikroTik manual, bridging-and-switching/index.md, bridge port print).
BRIDGE_PORT_FLAGS: Mapping[str, str] = {
    "X": "disabled",
    "I": "inactive",
    "D": "dynamic",
    "H": "hw-offload",
}


def _with_flags(rows: tuple[Row, ...], legend: Mapping[str, str]) -> tuple[Row, ...]:
    out: list[Row] = []
    for row in rows:
        flags = row.get(FLAGS)
        extra: Row = {}
        if flags is not None:
            for letter, meaning in legend.items():
                extra[meaning] = "true" if letter in flags else "false"
        out.append({**extra, **row})
    return tuple(out)


def _list_rows(text: str, what: str, legend: Mapping[str, str]) -> tuple[Row, ...]:
    """The items of a `print`, in any of its forms."""
    if looks_like_json(text):
        return parse_rest_json(text)
    check_failure(text, what)
    if has_table(text):
        table = parse_table(text)
        return _with_flags(table.rows, {**legend, **table.legend})
    if is_as_value(text):
        return parse_as_value(text)
    rows = parse_terse(text)
    if not rows:
        raise ParseError(
            what,
            "no items: neither terse/detail lines (0 R name=...), a column "
            "table ('#  NAME ...') nor REST JSON",
            found_text(text),
        )
    return _with_flags(rows, {**legend, **parse_legend(text)})


def _kv_rows(text: str, what: str) -> tuple[Row, ...]:
    """`key: value` items (monitor, resource, stats), or their JSON / as-value forms."""
    if looks_like_json(text):
        return parse_rest_json(text)
    check_failure(text, what)
    if is_as_value(text):
        return parse_as_value(text)
    try:
        return parse_kv_columns(text)
    except ParseError:
        raise ParseError(
            what, "no 'key: value' line (nor REST JSON or as-value)", found_text(text)
        ) from None


def parse_ethernet(text: str) -> tuple[EthernetPort, ...]:
    """`/interface ethernet print` (terse, detail or columns) or `GET /rest/interface/ethernet`."""
    rows = _list_rows(text, "routeros /interface ethernet print", ETHERNET_FLAGS)
    if not any("name" in r for r in rows):
        raise ParseError(
            "routeros /interface ethernet print", "no item has a name", found_text(text)
        )
    return ethernet_from_rest(rows)


def parse_bridge_ports(text: str) -> tuple[BridgePort, ...]:
    """`/interface bridge port print` (terse, detail or columns) or its REST GET."""
    rows = _list_rows(text, "routeros /interface bridge port print", BRIDGE_PORT_FLAGS)
    if not any("interface" in r for r in rows):
        raise ParseError(
            "routeros /interface bridge port print", "no item has an interface", found_text(text)
        )
    return bridge_ports_from_rest(rows)


def parse_qos_ports(text: str) -> tuple[QosPort, ...]:
    """`/interface ethernet switch qos port print` (terse, detail or columns) or its REST GET."""
    rows = _list_rows(text, "routeros /interface ethernet switch qos port print", {})
    if not any("name" in r for r in rows):
        raise ParseError(
            "routeros /interface ethernet switch qos port print",
            "no item has a name",
            found_text(text),
        )
    return qos_ports_from_rest(rows)


def parse_routeros_monitors(text: str) -> tuple[EthernetMonitor, ...]:
    """`/interface ethernet monitor IF[,IF...] once` (one column per interface), its as-value
    form, or the REST reply of `POST /rest/interface/ethernet/monitor`."""
    what = "routeros monitor"
    rows = _kv_rows(text, what)
    if not rows:
        raise ParseError(what, "empty reply")
    try:
        return tuple(ethernet_monitor_from_kv(r) for r in rows)
    except ParseError as err:
        raise ParseError(err.tool, err.missing, found_text(text)) from None


def parse_routeros_monitor(text: str) -> EthernetMonitor:
    """One interface's `monitor ... once` (the read the suite makes per leg)."""
    monitors = parse_routeros_monitors(text)
    if len(monitors) != 1:
        names = ", ".join(m.name or "?" for m in monitors)
        raise ParseError(
            "routeros monitor",
            f"{len(monitors)} interfaces ({names}) where one was asked for",
        )
    return monitors[0]


def parse_system_resource(text: str) -> SystemResource:
    """`/system resource print`, its as-value form, or `GET /rest/system/resource`."""
    what = "routeros /system resource"
    rows = _kv_rows(text, what)
    if len(rows) != 1:
        raise ParseError(what, f"{len(rows)} items where the menu has one")
    try:
        return system_resource_from_kv(rows[0])
    except ParseError as err:
        raise ParseError(err.tool, err.missing, found_text(text)) from None


def parse_ethernet_stats(text: str) -> tuple[EthernetStats, ...]:
    """`/interface ethernet print stats` in any form: key: value columns (one per interface,
    numbers grouped by spaces), a column table, detail, as-value, or the REST reply."""
    what = "routeros /interface ethernet print stats"
    if looks_like_json(text):
        rows = parse_rest_json(text)
    else:
        check_failure(text, what)
        if has_table(text):
            rows = parse_table(text).rows
        elif is_as_value(text):
            rows = parse_as_value(text)
        else:
            rows = parse_terse(text) or _kv_rows(text, what)
    stats = ethernet_stats_from_rows(rows)
    if not any(s.counters for s in stats):
        raise ParseError(what, "no counter (rx-*, tx-*, rs-fec-*) in the output", found_text(text))
    return stats
