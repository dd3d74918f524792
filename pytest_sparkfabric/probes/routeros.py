"""What a MikroTik RouterOS switch says, as typed values whichever way it was read: one reader
(`read`) turns every form it answers in (REST JSON, as-value, column tables, items, `key: value`;
tests/data/routeros-*/PROVENANCE.md) into rows keyed by property name, so a check cannot tell REST
from the console (ntc-templates' TextFSM covers three of the six reads). A refused command comes on
stdout with exit status 0: `read` names it. A property the switch did not print is None."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from pytest_sparkfabric.probes import ParseError, found_text

Row = dict[str, str]
INDEX, FLAGS = ".index", ".flags"  # an item's number and flag letters (no RouterOS properties)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Console refusals, as measured on RouterOS 7.20.8 (index id 63101946964) and listed by an import
# scanner (index id 70657704534).
_FAILURE = re.compile(
    r"^(?:bad command name|syntax error|expected end of command|expected command name|"
    r"failure:|script error:|no such item|not enough permissions|"
    r"input does not match any value of|invalid value for argument|ambiguous value of)",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"\S+")
_ITEM = re.compile(r"^[ \t]*(?P<index>\d{1,9})(?=[ \t]|$)(?P<rest>.*)$")
# An item line: its index, flag letters, then `;;;`, a `key=` or nothing.
_ITEM_LINE = re.compile(
    r"^[ \t]*(?P<index>\d{1,9})(?=[ \t]|$)(?P<flags>[ \t]*(?:[A-Za-z][ \t]*)*?)"
    r"(?P<body>(?:;;;|[a-z.][a-z0-9._/-]*=).*)?$"
)
_HEADER = re.compile(r"^[ \t]*#(?:[ \t]+[A-Z][A-Za-z0-9-]*)+[ \t]*$")
_LEGEND = re.compile(r"(?:^|[,;])\s*([A-Za-z]) - ([A-Za-z][A-Za-z0-9-]*(?: [a-z][a-z-]*)*)")
_KEY = re.compile(r"^[ \t]*(?P<key>[A-Za-z][A-Za-z0-9_.\-/]*):(?=[ \t]|$)")
# A pair's value runs to the next ` key=` unless it is quoted.
_PAIR = re.compile(
    r'(?:(?<=\s)|^)([a-z.][a-z0-9._/-]*)=(?:"((?:[^"\\]|\\.)*)"|(.*?))'
    r"(?=\s+[a-z.][a-z0-9._/-]*=|\s*$)"
)
_AS_VALUE = re.compile(r"^\.?[a-z][a-z0-9._/-]*=[^\n]*;")


def rest_rows(data: Any) -> tuple[Row, ...]:
    """A decoded REST reply as rows, every value kept as a string."""
    items = data if isinstance(data, list) else [data]
    if len(items) == 1 and isinstance(items[0], Mapping) and {"error", "message"} <= set(items[0]):
        item = items[0]
        detail = f" ({item['detail']})" if item.get("detail") else ""
        raise ParseError("routeros REST", f"error {item['error']} {item['message']}{detail}")
    if not all(isinstance(i, Mapping) for i in items):
        raise ParseError("routeros REST", "reply is not a list of objects")
    return tuple(
        {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in i.items()} for i in items
    )


def read(text: str, what: str, flags: Mapping[str, str] | None = None) -> tuple[Row, ...]:
    """Whatever RouterOS printed, as rows; ParseError (tool `what`) when it refused the command
    or printed none of its forms. An item's flag letters become properties, `true` or `false`
    (as REST says them), by the printed `Flags:` legend over `flags` (letter -> property).
    Colour escapes go; CR LF (RouterOS over SSH) and lone CRs are line ends."""
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    if text.lstrip()[:1] in ("[", "{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise ParseError("routeros REST", "reply is not JSON") from None
        return rest_rows(data)
    lines = text.split("\n")
    if refused := next((s[:200] for s in map(str.strip, lines) if _FAILURE.match(s)), None):
        raise ParseError(what, f"RouterOS refused the command: {refused!r}")
    if "\n" not in text.strip() and _AS_VALUE.match(text.strip()):
        return _as_value(text.strip())
    legend = dict(flags or {}) | {
        letter: meaning.lower().replace(" ", "-")
        for line in map(str.strip, lines)
        if line.startswith("Flags:")
        for letter, meaning in _LEGEND.findall(line[6:].strip())
    }
    at = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    rows = _table(lines, at) if at is not None else _items(lines) or _key_values(lines)
    if not rows and at is None:
        raise ParseError(
            what,
            "nothing RouterOS prints: no REST JSON, as-value, column table ('#  NAME ...'), "
            "item lines ('0 R name=...') or 'key: value' lines",
            found_text(text),
        )
    return tuple(
        {**{p: str(k in r[FLAGS]).lower() for k, p in legend.items()}, **r} if FLAGS in r else r
        for r in rows
    )


def _cells(line: str, labels: Sequence[tuple[int, int]]) -> dict[int, str]:
    """A line's cells by column. A token that starts or ends with a column's label is anchored
    to it; digit groups one space before an anchored group belong to its number (numbers are
    right-aligned: `205 149 015`); then a token one space after an anchored one continues its
    text (text is left-aligned: `hAP ax lite`); the rest go to the column they overlap most
    (or, overlapping none, lie nearest)."""
    tokens = [m.span() for m in _TOKEN.finditer(line)]
    col = [
        next((j for j, (ls, le) in enumerate(labels) if ls == s or le == e), None)
        for s, e in tokens
    ]
    for i in reversed(range(len(tokens) - 1)):
        (s, _), (_, e) = tokens[i], tokens[i + 1]
        if col[i] is None and col[i + 1] is not None and re.fullmatch(r"\d{1,3} \d{3}", line[s:e]):
            col[i] = col[i + 1]
    for i in range(1, len(tokens)):
        if col[i] is None and col[i - 1] is not None and tokens[i - 1][1] + 1 == tokens[i][0]:
            col[i] = col[i - 1]
    cells: dict[int, list[tuple[int, int]]] = {}
    for (s, e), j in zip(tokens, col, strict=True):
        # Overlap with each label, minus the gap where none; ties: the last overlapped, the
        # first near.
        ov = [(min(e, le) - max(s, ls), k) for k, (ls, le) in enumerate(labels)]
        best = max((o, k if o > 0 else -k, k) for o, k in ov)[2] if j is None else j
        cells.setdefault(best, []).append((s, e))
    return {j: line[c[0][0] : c[-1][1]] for j, c in cells.items()}


def _table(lines: list[str], at: int) -> tuple[Row, ...]:
    found = list(_TOKEN.finditer(lines[at]))[1:]
    keys, spans = [m[0].lower() for m in found], [m.span() for m in found]
    rows: list[Row] = []
    comment: str | None = None
    for line in lines[at + 1 :]:
        m = _ITEM.match(line)
        if line.strip().startswith(";;;"):
            comment = line.strip()[3:].strip()
        elif m is None and rows and line[:1].isspace() and line.strip():
            for j, cell in _cells(line, spans).items():  # a list continues under its column
                rows[-1][keys[j]] = f"{rows[-1][keys[j]]},{cell}" if keys[j] in rows[-1] else cell
        elif m is not None:
            body, row = " " * m.start("rest") + m["rest"], {INDEX: m["index"], FLAGS: ""}
            if re.fullmatch(r"[ \tA-Za-z]*", head := body[: spans[0][0]]):
                row[FLAGS], body = re.sub(r"\s", "", head), " " * len(head) + body[len(head) :]
            row |= {keys[j]: cell for j, cell in _cells(body, spans).items()}
            if comment is not None:
                row.setdefault("comment", comment)
            comment = None
            rows.append(row)
    return tuple(rows)


def _items(lines: list[str]) -> tuple[Row, ...]:
    rows: list[Row] = []
    row: Row | None = None
    for line in lines:
        m = _ITEM_LINE.match(line)
        if m and (m["body"] or not m["flags"].strip()):
            row = {INDEX: m["index"], FLAGS: re.sub(r"\s", "", m["flags"])}
            rows.append(row)
            body = m["body"] or ""
            if body.startswith(";;;"):
                row["comment"] = body[3:].strip()
                continue
        elif row is None or not line.strip():
            row = None
            continue
        elif not line[:1].isspace():
            if len(row) == 3 and "comment" in row:  # a long comment wrapped before the pairs
                row["comment"] = f"{row['comment']} {line.strip()}".strip()
            continue
        else:
            body = line
        for p in _PAIR.finditer(body.strip()):
            row.setdefault(p[1], p[3].strip() if p[2] is None else re.sub(r"\\(.)", r"\1", p[2]))
    return tuple(r for r in rows if len(r) > 2)


def _as_value(text: str) -> tuple[Row, ...]:
    rows: list[Row] = []
    row: Row = {}
    key = ""
    for part in text.split(";"):
        name, eq, value = part.partition("=")
        if eq and re.fullmatch(r"\.?[a-z][a-z0-9._/-]*", name.strip()):
            key = name.strip()
            if not rows or key in row:
                rows.append(row := {})
            row[key] = value.strip()
        elif rows:
            row[key] = f"{row[key]};{part.strip()}"
    return tuple(rows)


def _key_values(lines: list[str]) -> tuple[Row, ...]:
    kvs: list[tuple[str, str, list[str]]] = []
    more: list[str] | None = None
    for line in lines:
        if m := _KEY.match(line):
            # Blanked, not cut: the value keeps its columns for the splitter.
            kvs.append((m["key"], " " * m.end() + line[m.end() :].rstrip(), more := []))
        elif more is not None and line[:1] in (" ", "\t") and line.strip():
            more.append(line.strip())
        else:  # a log line printed into the session (column 0), an elision, or blank
            more = None
    labels = [m.span() for m in _TOKEN.finditer(next((v for k, v, _ in kvs if k == "name"), ""))]
    split = [(k, _cells(v, labels)) for k, v, _ in kvs] if len(labels) > 1 else []
    if any(len(cells) > 1 for k, cells in split if k != "name"):
        rows: list[Row] = [{} for _ in labels]
        for key, cells in split:
            for j, row in enumerate(rows):
                row.setdefault(key, cells.get(j, ""))
        return tuple(rows)
    one: Row = {}
    for key, first, wrapped in kvs:
        value = first.strip()
        for part in wrapped:
            # A wrapped list (`...,1G-baseT-full,` / `1G-baseX,...`) continues on the next line;
            # anything else (the eeprom hex dump) keeps its line breaks.
            value = f"{value}{'' if value.endswith(',') or not value else chr(10)}{part}"
        one.setdefault(key, value)
    return (one,) if one else ()


# -- typed reads ------------------------------------------------------------------------------

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
    return field(default=None, metadata={"of": lambda row: (conv or (lambda v: v))(row.get(key))})


def _whole(of: Callable[[Mapping[str, str]], object]) -> Any:
    return field(default_factory=dict, metadata={"of": of})


def _from_row(cls: Callable[..., T], row: Mapping[str, str]) -> T:
    return cls(**{f.name: f.metadata["of"](row) for f in fields(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class SystemResource:
    cpu_load_pct: int | None = _p("cpu-load", _int)
    version: str | None = _p("version")
    board_name: str | None = _p("board-name")


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


@dataclass(frozen=True, slots=True)
class BridgePort:
    """An `/interface bridge port print` item. ``hw`` is the request; ``hw-offload`` the fact."""

    interface: str | None = _p("interface")
    bridge: str | None = _p("bridge")
    hw_requested: bool | None = _p("hw", _bool)
    hw_offload: bool | None = _p("hw-offload", _bool)


@dataclass(frozen=True, slots=True)
class QosPort:
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
    """`/interface ethernet print stats` of one interface: every counter printed (rx-*, tx-*,
    rs-fec-*, fc-fec-*, driver-*) by its RouterOS name; one the device does not print is absent
    (RS-FEC counters exist only in fec91 mode, rx-drop only on some chips)."""

    name: str | None = _p("name")
    counters: Mapping[str, int] = _whole(_counters)


def _rows_to(cls: Callable[..., T]) -> Callable[[Rows], tuple[T, ...]]:
    return lambda rows: tuple(_from_row(cls, r) for r in rows)


def _item(cls: Callable[..., T], what: str, *keys: str) -> Callable[[Mapping[str, str]], T]:
    def item(row: Mapping[str, str]) -> T:
        if not any(k in row for k in keys):
            raise ParseError(what, f"no {' or '.join(map(repr, keys))} property")
        return _from_row(cls, row)

    return item


# Rows of a read (REST's or the console's) as typed values.
system_resource_from_kv = _item(
    SystemResource, "routeros /system resource", "cpu-load", "version", "board-name"
)
ethernet_monitor_from_kv = _item(EthernetMonitor, "routeros monitor", "name", "status")
ethernet_from_rest = _rows_to(EthernetPort)
bridge_ports_from_rest = _rows_to(BridgePort)
qos_ports_from_rest = _rows_to(QosPort)
ethernet_stats_from_rows = _rows_to(EthernetStats)


def _read(
    what: str, build: Callable[[Rows], T], problem: str | Callable[[Rows], str], flags: Any = None
) -> Callable[[str], T]:
    """The parser of one read: `read`, then `build` unless `problem` names one (a string: the
    property some item must have) or `build` refuses: a ParseError quoting the text."""

    def parse(text: str) -> T:
        rows = read(text, what, flags)
        try:
            if isinstance(problem, str):
                if not any(problem in r for r in rows):
                    raise ParseError(what, f"no item has the property {problem!r}")
            elif why := problem(rows):
                raise ParseError(what, why)
            return build(rows)
        except ParseError as err:
            raise ParseError(err.tool, err.missing, found_text(text)) from None

    return parse


# Each in any form the console prints, or the REST reply of the same read.
parse_ethernet = _read(
    "routeros /interface ethernet print", ethernet_from_rest, "name", ETHERNET_FLAGS
)
parse_bridge_ports = _read(
    "routeros /interface bridge port print", bridge_ports_from_rest, "interface", BRIDGE_PORT_FLAGS
)
parse_qos_ports = _read(
    "routeros /interface ethernet switch qos port print", qos_ports_from_rest, "name"
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
