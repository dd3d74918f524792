"""``ethtool -S <netdev>``: NIC counters by name, and a typed view of the mlx5 PHY groups.

ethtool prints ``NIC statistics:`` then one ``     name: value`` line per counter; pastes vary
the indentation (5 spaces, tabs, none after a ``grep``) and annotated pastes add a trailing
``# comment`` (which may hold digits and full-width colons), so a line is cut at the first
``#`` that follows whitespace before it is read.

Counter names and their groups: Linux Documentation/networking/device_drivers/ethernet/
mellanox/mlx5/counters.rst and drivers/net/ethernet/mellanox/mlx5/core/en_stats.c:

- physical port: ``rx_crc_errors_phy``, ``rx_symbol_err_phy``, ``rx_discards_phy``,
  ``link_down_events_phy``, ``rx_pause_ctrl_phy`` / ``tx_pause_ctrl_phy`` (global pause);
- PHY statistical group (only when the NIC has the PCAM capability): ``rx_pcs_symbol_err_phy``
  (errors FEC could not correct), ``rx_corrected_bits_phy``, and per lane
  ``rx_err_lane_{0..3}_phy`` (bits corrected per lane: the pre-FEC error count);
- ``rx_bits_phy`` is documented but not exported by upstream mlx5: usually absent;
- per priority, only for priorities with PFC on: ``rx_prioN_pause``, ``tx_prioN_pause``;
- software: ``rx_out_of_buffer`` (no receive buffer posted).

A counter that is absent is None in the typed view, never 0: a NIC without the PHY group
reads "not measured", not "clean".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "ethtool -S"

_STAT = re.compile(r"^\s*(?P<name>\S(?:.*\S)?)\s*:\s*(?P<value>-?\d{1,20})\s*$")
_COMMENT = re.compile(r"\s#.*$")
_LANE = re.compile(r"^rx_err_lane_(\d{1,3})_phy$")
_PRIO_PAUSE = re.compile(r"^(rx|tx)_prio(\d{1,2})_pause$")


@dataclass(frozen=True, slots=True)
class PhyCounters:
    """The mlx5 physical-layer and loss counters, typed; None where the NIC has no counter."""

    lane_errors: Mapping[int, int]
    corrected_bits: int | None
    bits: int | None
    pcs_symbol_errors: int | None
    symbol_errors: int | None
    crc_errors: int | None
    link_down_events: int | None
    discards: int | None
    out_of_buffer: int | None
    rx_pause: int | None
    tx_pause: int | None
    rx_prio_pause: Mapping[int, int]
    tx_prio_pause: Mapping[int, int]

    _json_properties: ClassVar[tuple[str, ...]] = ("has_lane_counters",)

    @property
    def has_lane_counters(self) -> bool:
        """Whether the NIC exports per-lane pre-FEC errors (the PCAM per-lane capability)."""
        return bool(self.lane_errors)


@dataclass(frozen=True, slots=True)
class EthtoolStats(Mapping[str, int]):
    """``ethtool -S`` counters by name, with helpers for the mlx5 physical-layer ones."""

    counters: Mapping[str, int] = field(default_factory=dict)

    _json_properties: ClassVar[tuple[str, ...]] = ("phy",)

    def __getitem__(self, key: str) -> int:
        return self.counters[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.counters)

    def __len__(self) -> int:
        return len(self.counters)

    def lane_errors(self) -> dict[int, int]:
        """``rx_err_lane_N_phy``: bits FEC corrected per lane (pre-FEC errors), by lane number."""
        out: dict[int, int] = {}
        for name, value in self.counters.items():
            m = _LANE.match(name)
            if m:
                out[int(m.group(1))] = value
        return dict(sorted(out.items()))

    @property
    def corrected_bits(self) -> int | None:
        return self.counters.get("rx_corrected_bits_phy")

    @property
    def bits(self) -> int | None:
        return self.counters.get("rx_bits_phy")

    @property
    def symbol_errors(self) -> int | None:
        return self.counters.get("rx_pcs_symbol_err_phy")

    @property
    def crc_errors(self) -> int | None:
        return self.counters.get("rx_crc_errors_phy")

    @property
    def link_down_events(self) -> int | None:
        return self.counters.get("link_down_events_phy")

    @property
    def discards(self) -> int | None:
        return self.counters.get("rx_discards_phy")

    @property
    def out_of_buffer(self) -> int | None:
        return self.counters.get("rx_out_of_buffer")

    def pause_frames(self) -> dict[str, int]:
        """Global and per-priority pause counters (``rx_pause_ctrl_phy``, ``tx_prio3_pause``...)."""
        return {k: v for k, v in self.counters.items() if "pause" in k}

    def prio_pause(self, direction: str) -> dict[int, int]:
        """``rx``/``tx_prioN_pause`` by priority: present only for priorities with PFC on."""
        out: dict[int, int] = {}
        for name, value in self.counters.items():
            m = _PRIO_PAUSE.match(name)
            if m and m.group(1) == direction:
                out[int(m.group(2))] = value
        return dict(sorted(out.items()))

    @property
    def phy(self) -> PhyCounters:
        c = self.counters
        return PhyCounters(
            lane_errors=self.lane_errors(),
            corrected_bits=self.corrected_bits,
            bits=self.bits,
            pcs_symbol_errors=self.symbol_errors,
            symbol_errors=c.get("rx_symbol_err_phy"),
            crc_errors=self.crc_errors,
            link_down_events=self.link_down_events,
            discards=self.discards,
            out_of_buffer=self.out_of_buffer,
            rx_pause=c.get("rx_pause_ctrl_phy"),
            tx_pause=c.get("tx_pause_ctrl_phy"),
            rx_prio_pause=self.prio_pause("rx"),
            tx_prio_pause=self.prio_pause("tx"),
        )


def parse_ethtool_stats(text: str) -> EthtoolStats:
    counters: dict[str, int] = {}
    header = False
    for raw in text.splitlines():
        line = _COMMENT.sub("", raw)
        if line.strip() == "NIC statistics:":
            header = True
            continue
        m = _STAT.match(line)
        if m:
            counters.setdefault(m.group("name"), int(m.group("value")))
    if not counters and not header:
        raise ParseError(
            TOOL,
            "expected a 'NIC statistics:' header or 'name: value' counter lines",
            found_text(text),
        )
    return EthtoolStats(counters)
