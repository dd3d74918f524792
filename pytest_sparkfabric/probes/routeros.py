"""MikroTik RouterOS 7: CLI ``print`` / ``monitor ... once`` and ``print terse``, and REST JSON.

CLI key/value output right-aligns the keys (sometimes with stray leading tabs), leaves empty
values empty (``link-partner-advertising:``), wraps long values such as the SFP ``eeprom`` hex
dump onto indented continuation lines, and may carry a log line (``17:20:06 echo: ...``) in
the middle. REST returns every value as a string (``"true"``, ``"9000"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_sparkfabric.probes import ParseError

_KEY_LINE = re.compile(
    r"^[ \t]*(?P<key>[A-Za-z][A-Za-z0-9_.\-/]*):(?:[ \t]+(?P<value>.*?))?[ \t]*$"
)
_TERSE_PAIR = re.compile(r'(?P<key>[A-Za-z.][\w.\-/]*)=(?P<value>"(?:[^"\\]|\\.)*"|\S*)')
_SIZE = re.compile(r"^\s*(\d{1,15}(?:\.\d{1,6})?)\s*(B|KiB|MiB|GiB|TiB)?\s*$")
_SIZE_FACTOR = {None: 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_RATE = re.compile(r"^\s*(\d{1,6}(?:\.\d{1,3})?)\s*([MG])bps\s*$")


def parse_routeros_kv(text: str) -> dict[str, str]:
    """``key: value`` lines; indented lines that are not ``key:`` continue the previous value."""
    out: dict[str, str] = {}
    last: str | None = None
    for line in text.splitlines():
        m = _KEY_LINE.match(line)
        if m:
            last = m.group("key")
            out.setdefault(last, m.group("value") or "")
        elif last is not None and line[:1] in (" ", "\t") and line.strip():
            out[last] = f"{out[last]}\n{line.strip()}" if out[last] else line.strip()
        else:
            # A log line printed into the session (starts in column 0), or blank.
            last = None
    if not out:
        raise ParseError("routeros", "no 'key: value' line")
    return out


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"yes": True, "true": True, "no": False, "false": False}.get(value.strip().lower())


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    m = re.match(r"^\s*(-?\d{1,15})\s*%?\s*$", value)
    return int(m.group(1)) if m else None


def _float_unit(value: str | None, unit: str) -> float | None:
    if value is None:
        return None
    m = re.match(rf"^\s*(-?\d{{1,9}}(?:\.\d{{1,6}})?)\s*{unit}\s*$", value, re.IGNORECASE)
    return float(m.group(1)) if m else None


def size_bytes(value: str | None) -> int | None:
    """``3704.1MiB`` (CLI) or ``3884056576`` (REST) -> bytes."""
    if value is None:
        return None
    m = _SIZE.match(value)
    return int(float(m.group(1)) * _SIZE_FACTOR[m.group(2)]) if m else None


def rate_gbps(value: str | None) -> float | None:
    """``200Gbps`` / ``10Gbps`` / ``100Mbps`` -> Gb/s."""
    if value is None:
        return None
    m = _RATE.match(value)
    if not m:
        return None
    return float(m.group(1)) * (1.0 if m.group(2) == "G" else 0.001)


@dataclass(frozen=True, slots=True)
class SystemResource:
    cpu_load_pct: int | None
    version: str | None
    board_name: str | None
    uptime: str | None = None
    architecture: str | None = None
    cpu_count: int | None = None
    free_memory_bytes: int | None = None
    total_memory_bytes: int | None = None
    raw: Mapping[str, str] = field(default_factory=dict)


def system_resource_from_kv(values: Mapping[str, str]) -> SystemResource:
    if not any(k in values for k in ("cpu-load", "version", "board-name")):
        raise ParseError("routeros /system resource", "no cpu-load, version or board-name")
    return SystemResource(
        cpu_load_pct=_int(values.get("cpu-load")),
        version=values.get("version"),
        board_name=values.get("board-name"),
        uptime=values.get("uptime"),
        architecture=values.get("architecture-name"),
        cpu_count=_int(values.get("cpu-count")),
        free_memory_bytes=size_bytes(values.get("free-memory")),
        total_memory_bytes=size_bytes(values.get("total-memory")),
        raw=dict(values),
    )


def parse_system_resource(text: str) -> SystemResource:
    """``/system resource print`` (CLI text)."""
    return system_resource_from_kv(parse_routeros_kv(text))


@dataclass(frozen=True, slots=True)
class EthernetMonitor:
    name: str | None
    status: str | None
    rate_gbps: float | None
    full_duplex: bool | None
    auto_negotiation: str | None
    fec: str | None = None
    sfp_temp_c: float | None = None
    sfp_tx_power_dbm: float | None = None
    sfp_rx_power_dbm: float | None = None
    sfp_vendor_name: str | None = None
    sfp_vendor_part_number: str | None = None
    raw: Mapping[str, str] = field(default_factory=dict)

    @property
    def link_ok(self) -> bool:
        return self.status == "link-ok"


def ethernet_monitor_from_kv(values: Mapping[str, str]) -> EthernetMonitor:
    if "status" not in values and "name" not in values:
        raise ParseError("routeros monitor", "no 'name:' or 'status:' field")
    return EthernetMonitor(
        name=values.get("name"),
        status=values.get("status"),
        rate_gbps=rate_gbps(values.get("rate")),
        full_duplex=_bool(values.get("full-duplex")),
        auto_negotiation=values.get("auto-negotiation"),
        fec=values.get("fec"),
        sfp_temp_c=_float_unit(values.get("sfp-temperature"), "C"),
        sfp_tx_power_dbm=_float_unit(values.get("sfp-tx-power"), "dBm"),
        sfp_rx_power_dbm=_float_unit(values.get("sfp-rx-power"), "dBm"),
        sfp_vendor_name=values.get("sfp-vendor-name"),
        sfp_vendor_part_number=values.get("sfp-vendor-part-number"),
        raw=dict(values),
    )


def parse_routeros_monitor(text: str) -> EthernetMonitor:
    """``/interface ethernet monitor IF once`` (CLI text)."""
    return ethernet_monitor_from_kv(parse_routeros_kv(text))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def parse_print_terse(text: str) -> tuple[dict[str, str], ...]:
    """``print terse`` rows: ``0 R name=x mtu=9000``.

    Each row is a dict of its fields plus ``.index`` (the row number) and ``.flags`` (the flag
    letters, e.g. ``R``, ``X``, ``H``; empty when none), keys RouterOS itself never uses.
    """
    rows: list[dict[str, str]] = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\d{1,9})\s+(.*)$", line)
        if not m:
            continue
        rest = m.group(2)
        first = _TERSE_PAIR.search(rest)
        if first is None:
            continue
        flags = "".join(t for t in rest[: first.start()].split() if t.isalpha() and t.isupper())
        row = {".index": m.group(1), ".flags": flags}
        for pair in _TERSE_PAIR.finditer(rest[first.start() :]):
            row.setdefault(pair.group("key"), _unquote(pair.group("value")))
        rows.append(row)
    return tuple(rows)


# ---------------------------------------------------------------- REST JSON


def parse_rest_json(text: str) -> tuple[dict[str, str], ...]:
    """A REST reply: a list of objects (or one object), every value kept as a string."""
    try:
        data: Any = json.loads(text)
    except (ValueError, RecursionError):
        raise ParseError("routeros REST", "reply is not JSON") from None
    items = data if isinstance(data, list) else [data]
    out: list[dict[str, str]] = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ParseError("routeros REST", "reply is not a list of objects")
        out.append({str(k): v if isinstance(v, str) else json.dumps(v) for k, v in item.items()})
    return tuple(out)


@dataclass(frozen=True, slots=True)
class EthernetPort:
    name: str | None
    mtu_bytes: int | None
    l2mtu_bytes: int | None
    auto_negotiation: bool | None
    speed: str | None
    running: bool | None
    disabled: bool | None


def ethernet_from_rest(items: Sequence[Mapping[str, str]]) -> tuple[EthernetPort, ...]:
    """``GET /rest/interface/ethernet``."""
    return tuple(
        EthernetPort(
            name=i.get("name"),
            mtu_bytes=_int(i.get("mtu")),
            l2mtu_bytes=_int(i.get("l2mtu")),
            auto_negotiation=_bool(i.get("auto-negotiation")),
            speed=i.get("speed"),
            running=_bool(i.get("running")),
            disabled=_bool(i.get("disabled")),
        )
        for i in items
    )


@dataclass(frozen=True, slots=True)
class BridgePort:
    interface: str | None
    bridge: str | None
    hw_requested: bool | None
    hw_offload: bool | None
    role: str | None
    disabled: bool | None
    inactive: bool | None


def bridge_ports_from_rest(items: Sequence[Mapping[str, str]]) -> tuple[BridgePort, ...]:
    """``GET /rest/interface/bridge/port``. ``hw`` is the request; ``hw-offload`` the fact."""
    return tuple(
        BridgePort(
            interface=i.get("interface"),
            bridge=i.get("bridge"),
            hw_requested=_bool(i.get("hw")),
            hw_offload=_bool(i.get("hw-offload")),
            role=i.get("role"),
            disabled=_bool(i.get("disabled")),
            inactive=_bool(i.get("inactive")),
        )
        for i in items
    )


@dataclass(frozen=True, slots=True)
class QosPort:
    name: str | None
    trust_l3: str | None
    pfc: str | None
    egress_rate_queues: Mapping[int, str] = field(default_factory=dict)

    def limited_queues(self) -> dict[int, str]:
        """Queues with an egress rate cap set (anything but empty or 0)."""
        return {q: r for q, r in self.egress_rate_queues.items() if r.strip() not in ("", "0")}


def qos_ports_from_rest(items: Sequence[Mapping[str, str]]) -> tuple[QosPort, ...]:
    """``GET /rest/interface/ethernet/switch/qos/port``."""
    out: list[QosPort] = []
    for i in items:
        queues: dict[int, str] = {}
        for key, value in i.items():
            m = re.fullmatch(r"egress-rate-queue(\d{1,2})", key)
            if m:
                queues[int(m.group(1))] = value
        out.append(
            QosPort(
                name=i.get("name"),
                trust_l3=i.get("trust-l3"),
                pfc=i.get("pfc"),
                egress_rate_queues=dict(sorted(queues.items())),
            )
        )
    return tuple(out)
