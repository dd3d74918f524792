"""Link-quality maths of the heat soak (pure): error rates over windows, BER, lane outliers.

DOMAIN.md §6: judge rates over a window, never totals. Pre-FEC BER = d(corrected bits) / d(bits),
with d(bits) from `rx_bits_phy`, else estimated as speed x elapsed time. A lane is marginal when
its corrected-bit rate is far above the median of the other lanes in use, never judged against
less than a floor near the healthy trickle (the failing cable's hot lane logged ~2.9k/s, ~1000x
its neighbours, while its total still looked harmless). Lanes in use follow from the cable and
the speed (`active_lanes`): a 200G QSFP112 DAC runs 2 x 100G PAM4 on lanes 0-1 (mlx5
`200GAUI_2_200GBASE_CR2_KR2`), a 200G QSFP56 leg 4 x 50G (`200GAUI_4`); the driver defines lanes
0-3 only. Post-FEC symbol errors, CRC errors and link-down events must not grow at all.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pytest_sparkfabric.probes.ethtool import EthtoolStats

DEFAULT_SPEED_MBPS = 200_000
DRIVER_LANES: tuple[int, ...] = (0, 1, 2, 3)
"""mlx5 exports rx_err_lane_0_phy .. rx_err_lane_3_phy only (en_stats.c)."""
CableForm = Literal["QSFP112", "QSFP56"]


def active_lanes(
    *, speed_mbps: int | None, lanes_reported: int | None, form: CableForm | None
) -> tuple[int, ...]:
    """The lanes that carry the link: ethtool's own `Lanes:` when it prints one, else from the
    cable and speed (200G over QSFP112 = lanes 0-1), else all four the driver defines (a lane
    that carries nothing only lowers the median of the others down to the floor)."""
    if lanes_reported:
        return DRIVER_LANES[: max(1, min(lanes_reported, len(DRIVER_LANES)))]
    if form == "QSFP112" and speed_mbps == 200_000:
        return (0, 1)
    return DRIVER_LANES


def cable_form(topology: str) -> CableForm | None:
    """Node to node (direct, mesh, ring) the cable is a QSFP112 DAC: the Spark's cages are
    QSFP112 and NVIDIA's approved Spark cables are QSFP112 DACs (DOMAIN.md §6). Behind a switch
    the leg may be QSFP56 (4 lanes): unknown."""
    return None if topology == "switch" else "QSFP112"


def has_lane_counters(samples: Sequence[Sample]) -> bool:
    """Whether the NIC exposed rx_err_lane_*_phy at all (mlx5: the PCAM per-lane capability);
    without them no lane can be judged, which is "not measured", never "clean"."""
    return any(s.stats.lane_errors() for s in samples)


@dataclass(frozen=True, slots=True)
class Sample:
    """One `ethtool -S` reading at transport-clock time `t`."""

    t: float
    stats: EthtoolStats


@dataclass(frozen=True, slots=True)
class Window:
    start: float
    end: float
    lane_rates: Mapping[int, float]
    """Corrected bits per second, per lane."""
    corrected: int
    bits: float
    bits_estimated: bool
    symbol_errors: int
    crc_errors: int
    link_down_events: int

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def ber(self) -> float | None:
        return self.corrected / self.bits if self.bits > 0 else None


def _delta(a: int | None, b: int | None) -> int:
    """Growth of a counter; a missing or reset counter counts as no growth."""
    if a is None or b is None or b < a:
        return 0
    return b - a


def window(a: Sample, b: Sample, speed_mbps: float | None = None) -> Window:
    dt = b.t - a.t
    if dt <= 0:
        raise ValueError(f"samples out of order: {a.t} then {b.t}")
    la, lb = a.stats.lane_errors(), b.stats.lane_errors()
    rates = {lane: _delta(la.get(lane), lb.get(lane)) / dt for lane in sorted(set(la) | set(lb))}
    corrected = _delta(a.stats.corrected_bits, b.stats.corrected_bits)
    if a.stats.corrected_bits is None or b.stats.corrected_bits is None:
        corrected = sum(_delta(la.get(k), lb.get(k)) for k in rates)
    if a.stats.bits is not None and b.stats.bits is not None and b.stats.bits > a.stats.bits:
        bits, estimated = float(b.stats.bits - a.stats.bits), False
    else:
        bits, estimated = (speed_mbps or DEFAULT_SPEED_MBPS) * 1e6 * dt, True
    return Window(
        a.t,
        b.t,
        rates,
        corrected,
        bits,
        estimated,
        _delta(a.stats.symbol_errors, b.stats.symbol_errors),
        _delta(a.stats.crc_errors, b.stats.crc_errors),
        _delta(a.stats.link_down_events, b.stats.link_down_events),
    )


def windows(samples: Sequence[Sample], speed_mbps: float | None = None) -> list[Window]:
    return [window(a, b, speed_mbps) for a, b in itertools.pairwise(samples)]


def lanes_in_use(ws: Sequence[Window]) -> list[int]:
    return sorted({lane for w in ws for lane, rate in w.lane_rates.items() if rate > 0})


@dataclass(frozen=True, slots=True)
class LaneOutlier:
    """A lane far above the others: the first window it crossed the limit, and its worst."""

    lane: int
    rate_per_s: float
    median_others_per_s: float
    ratio: float
    start: float
    end: float
    worst_rate_per_s: float = 0.0
    worst_ratio: float = 0.0


def lane_outliers(
    ws: Sequence[Window],
    *,
    ratio_max: float,
    floor_per_s: float,
    lanes: Sequence[int] | None = None,
) -> list[LaneOutlier]:
    """Lanes whose rate in some window exceeds `ratio_max` x the median of the other lanes in
    use (never less than `floor_per_s`). `lanes`: the lanes in use (`active_lanes`); without
    them, the lanes whose counter moved."""
    in_use = sorted(lanes) if lanes is not None else lanes_in_use(ws)
    found: dict[int, LaneOutlier] = {}
    for w in ws:
        for lane in in_use:
            rate = w.lane_rates.get(lane, 0.0)
            others = [w.lane_rates.get(o, 0.0) for o in in_use if o != lane]
            median = statistics.median(others) if others else 0.0
            ratio = rate / max(median, floor_per_s)
            if ratio <= ratio_max:
                continue
            first = found.get(lane)
            if first is None:
                found[lane] = LaneOutlier(lane, rate, median, ratio, w.start, w.end, rate, ratio)
            elif ratio > first.worst_ratio:
                found[lane] = replace(first, worst_rate_per_s=rate, worst_ratio=ratio)
    return [found[k] for k in sorted(found)]


@dataclass(frozen=True, slots=True)
class Growth:
    symbol_errors: int
    crc_errors: int
    link_down_events: int

    def __bool__(self) -> bool:
        return bool(self.symbol_errors or self.crc_errors or self.link_down_events)

    def describe(self) -> str:
        parts = [
            f"{name} +{value}"
            for name, value in (
                ("rx_pcs_symbol_err_phy", self.symbol_errors),
                ("rx_crc_errors_phy", self.crc_errors),
                ("link_down_events_phy", self.link_down_events),
            )
            if value
        ]
        return ", ".join(parts) or "none"


def growth(ws: Sequence[Window]) -> Growth:
    return Growth(
        sum(w.symbol_errors for w in ws),
        sum(w.crc_errors for w in ws),
        sum(w.link_down_events for w in ws),
    )


def max_lane_rates(ws: Sequence[Window]) -> dict[int, float]:
    out: dict[int, float] = {}
    for w in ws:
        for lane, rate in w.lane_rates.items():
            out[lane] = max(out.get(lane, 0.0), rate)
    return dict(sorted(out.items()))


def max_ber(ws: Sequence[Window]) -> float | None:
    values = [b for w in ws if (b := w.ber) is not None]
    return max(values) if values else None
