"""``mlnx_qos -i <netdev>``: a rail's PFC, trust state and traffic classes, as the host sees them.

Layout from Mellanox/mlnx-tools ``python/mlnx_qos`` (``pretty_print``): ``DCBX mode: OS
controlled|Firmware controlled``; ``Priority trust state: pcp|dscp`` (then ``dscp2prio
mapping:`` and TAB-indented ``prio:N dscp:..,`` lines, a priority with many DSCPs continuing
on a second ``prio:N`` line); ``Receive buffer size (bytes): a,b,..[,max_buffer_size=N]``;
``Cable len: N``; ``PFC configuration:`` with rows ``priority 0..7``, ``enabled`` (1 = PFC on
that priority) and optionally ``buffer``; then per traffic class ``tc: N ratelimit: X, tsa:
ets|strict|vendor[, bw: N%]`` followed by ``priority: N`` lines (older MLNX_OFED also
``skprio: N`` lines). When trust cannot be read it prints ``Priority trust state is not
supported on your system``.

Pastes collapse spaces (rendered pages), change TABs to spaces, put blank lines between lines
or elide the tail, so lines are read by their words, never by indentation. A paste without the
PFC table has ``pfc_enabled`` None: "not shown", which is not "off".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "mlnx_qos"

Trust = Literal["pcp", "dscp", "none"]

_DCBX = re.compile(r"^DCBX mode:\s*(.+?)\s*$")
_TRUST = re.compile(r"^Priority trust state:\s*(\w+)")
_TRUST_NONE = "Priority trust state is not supported"
_DSCP = re.compile(r"^prio:\s*(\d)\s+dscp:\s*([\d,\s]*)$")
_BUFFER = re.compile(r"^Receive buffer size \(bytes\):\s*(.*)$")
_CABLE = re.compile(r"^Cable len:\s*(\d{1,6})")
_PFC_ROW = re.compile(r"^(priority|enabled|buffer)((?:\s+\d{1,9})+)\s*$")
_TC = re.compile(
    r"^tc:\s*(\d{1,2})\s+ratelimit:\s*([^,]+?),\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d{1,3})%)?"
)
_TC_PRIO = re.compile(r"^priority:\s*(\d)\s*$")


@dataclass(frozen=True, slots=True)
class TrafficClass:
    tc: int
    ratelimit: str
    tsa: str
    bw_pct: int | None
    priorities: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MlnxQos:
    """``pfc_enabled`` is one flag per priority 0..7, None when the paste shows no PFC table."""

    dcbx_mode: str | None
    trust: Trust | None
    pfc_enabled: tuple[bool, ...] | None
    pfc_buffer: tuple[int, ...] | None = None
    receive_buffer_bytes: tuple[int, ...] | None = None
    max_buffer_bytes: int | None = None
    cable_len_m: int | None = None
    dscp2prio: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    traffic_classes: tuple[TrafficClass, ...] = ()

    _json_properties: ClassVar[tuple[str, ...]] = ("pfc_priorities",)

    @property
    def pfc_priorities(self) -> tuple[int, ...] | None:
        """The priorities with PFC on (empty: PFC off everywhere; None: not shown)."""
        if self.pfc_enabled is None:
            return None
        return tuple(i for i, on in enumerate(self.pfc_enabled) if on)


def build_mlnx_qos(netdev: str) -> shell.Command:
    return shell.join(["mlnx_qos", "-i", netdev])


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in re.findall(r"\d{1,12}", text))


def _buffers(value: str) -> tuple[tuple[int, ...], int | None]:
    sizes: list[int] = []
    maximum: int | None = None
    for part in value.split(","):
        part = part.strip()
        if part.startswith("max_buffer_size="):
            tail = part.split("=", 1)[1]
            maximum = int(tail) if tail.isdigit() else None
        elif part.isdigit():
            sizes.append(int(part))
    return tuple(sizes), maximum


def parse_mlnx_qos(text: str) -> MlnxQos:
    dcbx: str | None = None
    trust: Trust | None = None
    pfc: dict[str, tuple[int, ...]] = {}
    receive: tuple[int, ...] | None = None
    maximum: int | None = None
    cable: int | None = None
    dscp: dict[int, tuple[int, ...]] = {}
    classes: list[tuple[int, str, str, int | None, list[int]]] = []
    recognised = False
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        if m := _DCBX.match(line):
            dcbx, recognised = m.group(1), True
        elif line.startswith(_TRUST_NONE):
            trust, recognised = "none", True
        elif m := _TRUST.match(line):
            word = m.group(1).lower()
            trust = "pcp" if word == "pcp" else "dscp" if word == "dscp" else None
            recognised = True
        elif m := _DSCP.match(line):
            prio = int(m.group(1))
            dscp[prio] = dscp.get(prio, ()) + _ints(m.group(2))
        elif m := _BUFFER.match(line):
            receive, maximum = _buffers(m.group(1))
            recognised = True
        elif m := _CABLE.match(line):
            cable = int(m.group(1))
        elif m := _PFC_ROW.match(line):
            pfc.setdefault(m.group(1), _ints(m.group(2)))
            recognised = True
        elif m := _TC.match(line):
            bw = int(m.group(4)) if m.group(4) else None
            classes.append((int(m.group(1)), m.group(2).strip(), m.group(3), bw, []))
            recognised = True
        elif (m := _TC_PRIO.match(line)) and classes:
            classes[-1][4].append(int(m.group(1)))
    if not recognised:
        raise ParseError(
            TOOL,
            "expected 'DCBX mode:', 'Priority trust state:', 'PFC configuration:' or 'tc:' lines",
            found_text(text),
        )
    enabled = pfc.get("enabled")
    return MlnxQos(
        dcbx_mode=dcbx,
        trust=trust,
        pfc_enabled=tuple(v == 1 for v in enabled) if enabled is not None else None,
        pfc_buffer=pfc.get("buffer"),
        receive_buffer_bytes=receive,
        max_buffer_bytes=maximum,
        cable_len_m=cable,
        dscp2prio=dict(sorted(dscp.items())),
        traffic_classes=tuple(
            TrafficClass(tc, rate, tsa, bw, tuple(prios)) for tc, rate, tsa, bw, prios in classes
        ),
    )
