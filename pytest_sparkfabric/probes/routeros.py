"""What a MikroTik RouterOS 7 switch says, as typed values: one dataclass per read.

Each `*_from_rest` / `*_from_kv` takes rows of strings keyed by RouterOS's property names,
as REST returns them (every value a string: `"true"`, `"9000"`) and as `routeros_text` reads
them off the console (`yes`, `3704.1MiB`, `182 334 805 898`); `routeros_reads` picks the form.
A property the switch did not print is None, never 0 or False.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_sparkfabric.probes import ParseError

_SIZE = re.compile(r"^\s*(\d{1,15}(?:\.\d{1,6})?)\s*(B|KiB|MiB|GiB|TiB)?\s*$")
_SIZE_FACTOR = {None: 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_RATE = re.compile(r"^\s*(\d{1,6}(?:\.\d{1,3})?)\s*([MG])bps\s*$")
# The console groups digits by three with spaces (manual, ethernet.md "Stats" example).
_COUNT = re.compile(r"^\s*(\d{1,3}(?: \d{3}){0,6}|\d{1,20})\s*$")


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


_ZERO_RATE = re.compile(r"^\s*0+(?:\.0+)?\s*[kKMG]?(?:bps)?\s*$")


@dataclass(frozen=True, slots=True)
class QosPort:
    name: str | None
    trust_l3: str | None
    pfc: str | None
    egress_rate_queues: Mapping[int, str] = field(default_factory=dict)

    def limited_queues(self) -> dict[int, str]:
        """Queues with an egress rate cap set: anything but empty, unset (`!`) or a zero rate
        (`0`, and `0bps` as the console prints an uncapped queue, index id 60378854232)."""
        return {
            q: r
            for q, r in self.egress_rate_queues.items()
            if r.strip() and not r.strip().startswith("!") and not _ZERO_RATE.match(r)
        }


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


def count(value: str | None) -> int | None:
    """A counter as REST (`"1503133696"`) or the console (`1 503 133 696`) prints it."""
    if value is None:
        return None
    m = _COUNT.match(value)
    return int(m.group(1).replace(" ", "")) if m else None


# Counter names: MikroTik manual, ethernet.md "Stats" (the list differs per device and
# driver); `tx-drop-packet` as CRS3xx/CRS8xx print it (index ids 60098335007, 60259870987).
_COUNTER_PREFIXES = ("rx-", "tx-", "rs-fec-", "fc-fec-", "driver-")


@dataclass(frozen=True, slots=True)
class EthernetStats:
    """`/interface ethernet print stats` of one interface. A counter the device does not
    print is None (RS-FEC counters exist only in fec91 mode, rx-drop only on some chips)."""

    name: str | None
    rx_fcs_error: int | None
    rx_drop: int | None
    tx_drop: int | None
    tx_drop_packet: int | None
    rx_pause: int | None
    tx_pause: int | None
    rx_error_events: int | None
    rx_too_long: int | None
    rs_fec_corrected: int | None
    rs_fec_uncorrected: int | None
    counters: Mapping[str, int] = field(default_factory=dict)
    """Every counter printed (rx-*, tx-*, rs-fec-*, fc-fec-*, driver-*), by its RouterOS name."""


def ethernet_stats_from_rows(items: Sequence[Mapping[str, str]]) -> tuple[EthernetStats, ...]:
    """`POST /rest/interface/ethernet/print {"stats": ""}` rows, or the console's."""
    out: list[EthernetStats] = []
    for i in items:
        counters = {
            k: n
            for k, v in i.items()
            if k.startswith(_COUNTER_PREFIXES) and (n := count(v)) is not None
        }
        out.append(
            EthernetStats(
                name=i.get("name"),
                rx_fcs_error=counters.get("rx-fcs-error"),
                rx_drop=counters.get("rx-drop"),
                tx_drop=counters.get("tx-drop"),
                tx_drop_packet=counters.get("tx-drop-packet"),
                rx_pause=counters.get("rx-pause"),
                tx_pause=counters.get("tx-pause"),
                rx_error_events=counters.get("rx-error-events"),
                rx_too_long=counters.get("rx-too-long"),
                rs_fec_corrected=counters.get("rs-fec-corrected"),
                rs_fec_uncorrected=counters.get("rs-fec-uncorrected"),
                counters=counters,
            )
        )
    return tuple(out)
