"""Which RDMA devices and ports an ``NCCL_IB_HCA`` value selects, as the NCCL on the node does.

Source: NVIDIA/nccl src/misc/utils.cc (``parseStringList``, ``matchIf``, ``matchPort``,
``matchIfList``) and the IB init (src/transport/net_ib.cc, net_ib/init.cc in 2.29+)::

    searchNot = env[0] == '^';  if (searchNot) env++;
    searchExact = env[0] == '='; if (searchExact) env++;
    nUserIfs = parseStringList(env, userIfs, MAX_IB_DEVS);
    keep (device, port) when matchIfList(name, port, userIfs, nUserIfs, searchExact) ^ searchNot

The list grammar depends on the version (``Grammar``):
- up to 2.4.8: only ``^``, skipped inside ``parseStringList``; no exact mode (``=`` is a name
  character);
- 2.5.6 to 2.30.4: ``^`` then ``=`` stripped once each (no second stripping: ``==x`` and
  ``^^x`` keep the second character in the name); ``name:N`` is port ``atoi(N)``, so
  ``name:`` is port 0, which no device has;
- 2.30.7 on (commit 7ec092af): ``name[:port[:rail[:plane]]]``; an empty field means "any", so
  ``name:`` takes every port; rail and plane only label the device.
Always: unset or empty selects everything; ``^`` alone selects nothing; at most 32 entries
(MAX_IB_DEVS); case-sensitive prefix match unless ``=``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

MAX_IB_DEVS = 32
Grammar = Literal["caret_only", "classic", "rail_plane"]
NcclVersion = tuple[int, int, int]
_VERSION = re.compile(r"(?:NCCL version |libnccl\.so\.)(\d+)\.(\d+)\.(\d+)")


def grammar_for(version: NcclVersion | None) -> Grammar:
    """``classic`` when the version is unknown (every release from 2019 to April 2026)."""
    if version is None or (2, 5, 6) <= version < (2, 30, 7):
        return "classic"
    return "rail_plane" if version >= (2, 30, 7) else "caret_only"


def find_nccl_version(text: str) -> NcclVersion | None:
    """The first ``NCCL version X.Y.Z`` (INFO log) or ``libnccl.so.X.Y.Z`` (library) in text."""
    m = _VERSION.search(text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


@dataclass(frozen=True, slots=True)
class HcaEntry:
    prefix: str
    port: int | None


@dataclass(frozen=True, slots=True)
class HcaSpec:
    raw: str | None
    exclude: bool
    exact: bool
    entries: tuple[HcaEntry, ...]
    grammar: Grammar = "classic"


@dataclass(frozen=True, slots=True)
class HcaSelection:
    device: str
    port: int


def _atoi(text: str) -> int:
    """C ``atoi``: leading whitespace, an optional sign, then digits; 0 when there are none."""
    i = 0
    while i < len(text) and text[i] in " \t\n\v\f\r":
        i += 1
    sign = 1
    if i < len(text) and text[i] in "+-":
        sign = -1 if text[i] == "-" else 1
        i += 1
    start = i
    while i < len(text) and "0" <= text[i] <= "9" and i - start < 18:
        i += 1
    return sign * int(text[start:i]) if i > start else 0


def _parse_string_list(text: str) -> tuple[HcaEntry, ...]:
    entries: list[HcaEntry] = []
    current = ""
    i = 0
    while i <= len(text) and len(entries) < MAX_IB_DEVS:
        c = text[i] if i < len(text) else ""
        if c == ":":
            if current:
                entries.append(HcaEntry(current, _atoi(text[i + 1 :])))
                current = ""
            while i < len(text) and text[i] != ",":
                i += 1
        elif c in (",", ""):
            if current:
                entries.append(HcaEntry(current, None))
                current = ""
        else:
            current += c
        i += 1
    return tuple(entries)


def _parse_fields(text: str) -> tuple[HcaEntry, ...]:
    """2.30.7+: strtok_r on ',' (empty entries vanish), strsep on ':'; empty port = any."""
    entries: list[HcaEntry] = []
    for item in text.split(","):
        name, *rest = item.split(":")
        if not name:
            continue
        port = _atoi(rest[0]) if rest and rest[0] else None
        entries.append(HcaEntry(name[:63], port))
        if len(entries) == MAX_IB_DEVS:
            break
    return tuple(entries)


def parse_hca_spec(spec: str | None, version: NcclVersion | None = None) -> HcaSpec:
    grammar = grammar_for(version)
    if spec is None:
        return HcaSpec(None, exclude=False, exact=False, entries=(), grammar=grammar)
    # A C string ends at the first NUL.
    text = spec.split("\0", 1)[0]
    exclude = text.startswith("^")
    if exclude:
        text = text[1:]
    exact = grammar != "caret_only" and text.startswith("=")
    if exact:
        text = text[1:]
    entries = _parse_fields(text) if grammar == "rail_plane" else _parse_string_list(text)
    return HcaSpec(spec, exclude, exact, entries, grammar)


def hca_matches(spec: HcaSpec, device: str, port: int) -> bool:
    if not spec.entries:
        listed = True
    else:
        listed = any(
            (device == e.prefix if spec.exact else device.startswith(e.prefix))
            # matchPort: -1 (no port given, or literally ":-1") matches any port.
            and (e.port is None or e.port == -1 or e.port == port)
            for e in spec.entries
        )
    return listed != spec.exclude


def select_hcas(
    spec: str | None,
    devices: Sequence[str],
    *,
    ports: Sequence[int] = (1,),
    version: NcclVersion | None = None,
) -> tuple[HcaSelection, ...]:
    """The (device, port) pairs NCCL ``version`` would use, in device order.

    ``ports`` are the port numbers every device has (a DGX Spark RoCE device has port 1 only).
    """
    parsed = parse_hca_spec(spec, version)
    return tuple(
        HcaSelection(device, port)
        for device in devices
        for port in ports
        if hca_matches(parsed, device, port)
    )
