"""ethtool: link settings, `-S` counters, `-i` driver, `-m` module EEPROM, `--show-fec`; every
parser reads `key: value` lines whatever the indentation (tabs, spaces, none after `grep`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

_KV = re.compile(r"^\s*(?P<key>[A-Za-z][^:]*?)\s*:\s*(?P<value>.*?)\s*$")
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)|-?inf", re.IGNORECASE)
_LENGTH = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(km|m)\s*$")


def _build(*flags: str) -> Callable[[str], shell.Command]:
    return lambda netdev: shell.join(["ethtool", *flags, netdev])


build_ethtool = _build()  # link settings
build_ethtool_fec = _build("--show-fec")
build_ethtool_stats = _build("-S")
build_ethtool_driver = _build("-i")
build_ethtool_module = _build("-m")  # the cable's EEPROM (root)


def _number(text: str | None) -> float | None:
    m = _NUMBER.search(text or "")
    return float(m.group(0)) if m else None


def _pairs(text: str) -> list[tuple[str, str]]:
    return [(m["key"], m["value"]) for line in text.splitlines() if (m := _KV.match(line))]


def _first(pairs: list[tuple[str, str]]) -> dict[str, str]:
    return dict(reversed(pairs))  # the first of a repeated key wins


@dataclass(frozen=True, slots=True)
class EthtoolLink:
    speed_mbps: int | None
    link_detected: bool | None
    link_detected_reason: str | None = None
    interface: str | None = None
    port: str | None = None
    lanes: int | None = None


def _yes_no(value: str | None) -> bool | None:
    word = (value or "").split(" ", 1)[0].lower()
    return {"yes": True, "on": True, "no": False, "off": False}.get(word)


def parse_ethtool(text: str) -> EthtoolLink:
    settings = re.findall(r"^\s*Settings for (\S+?):\s*$", text, re.M)
    values = _first(_pairs(text))
    keys = ("Speed", "Duplex", "Auto-negotiation", "Link detected")
    if not settings and not any(k in values for k in keys):
        raise ParseError(
            "ethtool", "expected 'Speed:', 'Duplex:' or 'Link detected:' lines", found_text(text)
        )
    speed = re.match(r"^(\d{1,9})\s*Mb/s$", values.get("Speed", ""))
    link = values.get("Link detected")
    reason = re.search(r"\((.*)\)", link or "")
    lanes = values.get("Lanes", "")
    return EthtoolLink(
        int(speed.group(1)) if speed else None,
        _yes_no(link),
        reason.group(1) if reason else None,
        settings[-1] if settings else None,
        values.get("Port"),
        int(lanes) if re.fullmatch(r"\d{1,3}", lanes) else None,
    )


@dataclass(frozen=True, slots=True)
class ModuleEeprom:
    identifier: str | None
    vendor_name: str | None
    vendor_pn: str | None
    vendor_sn: str | None
    transceiver_type: str | None
    length_m: float | None
    temp_c: float | None
    attenuation_db: Mapping[str, float] = field(default_factory=dict)
    alarms_on: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()


def parse_ethtool_module(text: str) -> ModuleEeprom:
    pairs = _pairs(text)
    first = _first(pairs)
    if not any(k in first for k in ("Identifier", "Vendor name", "Vendor PN")):
        raise ParseError(
            "ethtool -m",
            "expected 'Identifier' or 'Vendor' fields (no module, or EEPROM not readable)",
            found_text(text),
        )
    lengths: dict[str, float] = {}
    for key, value in pairs:
        # SFF-8636 "Length (Copper or Active cable)", CMIS "Cable assembly length" (cmis.c).
        lower = key.lower()
        is_length = lower.startswith("length (") or lower == "cable assembly length"
        if is_length and (m := _LENGTH.match(value)):
            lengths[key] = float(m.group(1)) * (1000.0 if m.group(2) == "km" else 1.0)
    copper = next(
        (v for k, v in lengths.items() if "copper" in k.lower() or "assembly" in k.lower()), None
    )
    attenuation = {
        k: n for k, v in pairs if "attenuation" in k.lower() and (n := _number(v)) is not None
    }
    alarms = [k for k, v in pairs if ("alarm" in k.lower() or "warning" in k.lower()) and v == "On"]
    temp = first.get("Module temperature")
    return ModuleEeprom(
        first.get("Identifier"),
        first.get("Vendor name"),
        first.get("Vendor PN"),
        first.get("Vendor SN"),
        first.get("Transceiver type"),
        copper or next((v for v in lengths.values() if v > 0), None),
        _number(temp) if temp else None,
        attenuation,
        tuple(alarms),
        tuple(pairs),
    )


@dataclass(frozen=True, slots=True)
class FecInfo:
    configured: tuple[str, ...]
    active: str | None
    interface: str | None = None


def parse_ethtool_fec(text: str) -> FecInfo:
    configured: tuple[str, ...] | None = None
    active = interface = None
    for line in map(str.strip, text.splitlines()):
        if m := re.match(r"^FEC parameters for (\S+?):$", line):
            interface = m.group(1)
        elif m := re.match(r"^(?:Supported/)?Configured FEC encodings:\s*(.*)$", line):
            configured = tuple(m.group(1).split())
        elif m := re.match(r"^Active FEC encodings?:\s*(.*)$", line):
            active = m.group(1).strip() or None
    if configured is None and active is None:
        raise ParseError(
            "ethtool --show-fec",
            "expected 'Configured FEC encodings' or 'Active FEC encoding' lines",
            found_text(text),
        )
    return FecInfo(configured or (), active, interface)


# ``ethtool -S``: ``NIC statistics:`` then ``name: value`` lines; annotated pastes add a trailing
# ``# comment`` after the value (names may hold digits and colons), so a line is cut at the
# first ``#`` after whitespace. Names: Linux Documentation/networking/device_drivers/ethernet/
# mellanox/mlx5/counters.rst.
_STAT = re.compile(r"^\s*(?P<name>\S(?:.*\S)?)\s*:\s*(?P<value>-?\d{1,20})\s*$")
_COMMENT = re.compile(r"\s#.*$")


@dataclass(frozen=True, slots=True)
class EthtoolStats(Mapping[str, int]):
    counters: Mapping[str, int] = field(default_factory=dict)

    def __getitem__(self, key: str) -> int:
        return self.counters[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.counters)

    def __len__(self) -> int:
        return len(self.counters)


def parse_ethtool_stats(text: str) -> EthtoolStats:
    counters: dict[str, int] = {}
    lines = [_COMMENT.sub("", raw) for raw in text.splitlines()]
    for m in filter(None, map(_STAT.match, lines)):
        counters.setdefault(m.group("name"), int(m.group("value")))
    if not counters and "NIC statistics:" not in map(str.strip, lines):
        raise ParseError(
            "ethtool -S",
            "expected a 'NIC statistics:' header or 'name: value' counter lines",
            found_text(text),
        )
    return EthtoolStats(counters)


# ``ethtool -i``: `driver`, `version` (the kernel release for the in-box mlx5, the MLNX_OFED/DOCA
# release when that driver is installed), `firmware-version` (maybe with the PSID in
# parentheses), `bus-info`, `supports-*` (tests/probes/ethtool_i_samples/).
@dataclass(frozen=True, slots=True)
class DriverInfo:
    driver: str
    version: str | None
    firmware_version: str | None


def parse_ethtool_driver(text: str) -> DriverInfo:
    fields = _first(_pairs(text))
    if not fields.get("driver"):
        raise ParseError("ethtool -i", "expected a 'driver: <name>' line", found_text(text))
    return DriverInfo(
        fields["driver"], fields.get("version") or None, fields.get("firmware-version") or None
    )
