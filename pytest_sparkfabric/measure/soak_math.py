"""Link-quality maths of the heat soak (pure): per-lane error rates and BER over the counter
log's windows (DOMAIN.md §6: rates over a window, never totals), the lanes in use, and the lane
judgement argued in docs/measurement.md.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.counters import Window
    from pytest_sparkfabric.probes.ethtool import ModuleEeprom

DEFAULT_SPEED_MBPS = 200_000
DRIVER_LANES: tuple[int, ...] = (0, 1, 2, 3)
"""mlx5 exports rx_err_lane_0_phy .. rx_err_lane_3_phy only (en_stats.c)."""
_LANE = re.compile(r"^rx_err_lane_(\d)_phy$")
CORRECTED = "rx_corrected_bits_phy"
BITS = "rx_bits_phy"
POST_FEC = ("rx_pcs_symbol_err_phy", "rx_crc_errors_phy", "link_down_events_phy")


@dataclass(frozen=True, slots=True)
class LanesInUse:
    """The lanes that carry the link (None: unknown) and where that came from."""

    lanes: tuple[int, ...] | None
    source: str


def lanes_in_use(
    *, lanes_reported: int | None, module: ModuleEeprom | None, speed_mbps: int | None
) -> LanesInUse:
    """ethtool's `Lanes:`, else the module EEPROM's management interface and the speed, else
    unknown (DOMAIN.md §9: SFF-8636 for QSFP56, CMIS for QSFP112)."""
    if lanes_reported:
        n = max(1, min(lanes_reported, len(DRIVER_LANES)))
        return LanesInUse(DRIVER_LANES[:n], f"ethtool Lanes: {lanes_reported}")
    ident = (module.identifier or "") if module is not None else ""
    # SFF-8024 identifiers as ethtool prints them: 0x11 (QSFP28) for SFF-8636 modules, 0x1e
    # (QSFP+ or later with CMIS) and 0x18 (QSFP-DD) for CMIS ones (ethtool sff-common.c).
    cmis = "cmis" in ident.lower() or ident.lower().startswith(("0x1e", "0x18"))
    sff8636 = ident.lower().startswith(("0x11", "0x0d"))
    if cmis and speed_mbps in (100_000, 200_000):
        n = speed_mbps // 100_000
        return LanesInUse(DRIVER_LANES[:n], f"module EEPROM {ident}: CMIS, {n} x 100G")
    if sff8636 and speed_mbps == 200_000:
        return LanesInUse(DRIVER_LANES, f"module EEPROM {ident}: SFF-8636 at 200G, 4 x 50G")
    why = f"module {ident}" if ident else "no module EEPROM read"
    return LanesInUse(None, f"unknown (no ethtool Lanes:, {why}): every lane that moved judged")


def lane_rates(w: Window) -> dict[int, float]:
    """Corrected bits per second per lane over the window (lanes whose counter was read)."""
    out = {int(m.group(1)): w.rate(k) for k in w.growth if (m := _LANE.match(k))}
    return dict(sorted(out.items()))


def has_lane_counters(ws: Sequence[Window]) -> bool:
    """Whether the NIC exposed rx_err_lane_*_phy at all (mlx5: the PCAM per-lane capability);
    without them no lane can be judged, which is "not measured", never "clean"."""
    return any(lane_rates(w) for w in ws)


def ber(w: Window, speed_mbps: float | None) -> float | None:
    corrected = w.growth.get(CORRECTED)
    if corrected is None:
        corrected = sum(v for k, v in w.growth.items() if _LANE.match(k))
    total = w.growth.get(BITS, 0) or (speed_mbps or DEFAULT_SPEED_MBPS) * 1e6 * w.seconds
    return corrected / total if total > 0 else None


def max_ber(ws: Sequence[Window], speed_mbps: float | None) -> float | None:
    values = [b for w in ws if (b := ber(w, speed_mbps)) is not None]
    return max(values) if values else None


def max_lane_rates(ws: Sequence[Window]) -> dict[int, float]:
    out: dict[int, float] = {}
    for w in ws:
        for lane, rate in lane_rates(w).items():
            out[lane] = max(out.get(lane, 0.0), rate)
    return dict(sorted(out.items()))


def post_fec_growth(ws: Sequence[Window]) -> dict[str, int]:
    """Post-FEC symbol errors, CRC errors and link-down events added over the windows."""
    out = {name: sum(w.growth.get(name, 0) for w in ws) for name in POST_FEC}
    return {k: v for k, v in out.items() if v}


def describe(grown: dict[str, int]) -> str:
    return ", ".join(f"{k} +{v}" for k, v in grown.items()) or "none"


@dataclass(frozen=True, slots=True)
class LaneLimits:
    ratio_max: float
    warn_ratio: float
    floor_per_s: float
    heat_growth_min: float
    ber_max: float


Level = Literal["fail", "warn"]


@dataclass(frozen=True, slots=True)
class LaneFinding:
    """A lane above its neighbours or its BER limit: the window it was worst in, and why."""

    lane: int
    level: Level
    rate_per_s: float
    median_others_per_s: float
    start_s: float
    end_s: float
    lane_ber: float
    grew: float | None
    """Its rate in the hottest window / its rate in the coolest (None: one window only)."""
    why: str


def judge_lanes(
    ws: Sequence[Window],
    temps_c: Sequence[float | None],
    *,
    in_use: tuple[int, ...] | None,
    speed_mbps: float | None,
    limits: LaneLimits,
) -> list[LaneFinding]:
    """Each lane's worst window against its neighbours and the FEC limit (`temps_c`: the NIC's
    temperature at the end of each window, None where not read)."""
    rates = [lane_rates(w) for w in ws]
    moved = sorted({lane for r in rates for lane, v in r.items() if v > 0})
    judged = [lane for lane in moved if in_use is None or lane in in_use]
    per_lane_bits = (speed_mbps or DEFAULT_SPEED_MBPS) * 1e6 / len(in_use or judged or (1,))
    # Coolest to hottest; time order stands in where a temperature was not read.
    order = sorted(range(len(ws)), key=lambda i: (temps_c[i] is None, temps_c[i] or 0.0, i))
    if any(t is None for t in temps_c):
        order = list(range(len(ws)))
    out: list[LaneFinding] = []
    for lane in judged:
        worst: tuple[float, int, float] | None = None  # (ratio, window, median of others)
        for i, r in enumerate(rates):
            others = [r.get(o, 0.0) for o in judged if o != lane]
            median = statistics.median(others) if others else 0.0
            ratio = r.get(lane, 0.0) / max(median, limits.floor_per_s)
            if worst is None or ratio > worst[0]:
                worst = (ratio, i, median)
        if worst is None:
            continue
        ratio, i, median = worst
        rate = rates[i].get(lane, 0.0)
        top = max(rates[j].get(lane, 0.0) / per_lane_bits for j in range(len(ws)))
        cool, hot = rates[order[0]].get(lane, 0.0), rates[order[-1]].get(lane, 0.0)
        grew = hot / max(cool, limits.floor_per_s) if len(ws) > 1 else None
        heated = grew is not None and grew >= limits.heat_growth_min
        level: Level | None = None
        if top > limits.ber_max:
            level, why = "fail", f"its own pre-FEC BER reached {top:.3g}, limit {limits.ber_max:g}"
        elif ratio > limits.ratio_max and heated:
            level, why = "fail", f"stands alone and grew {grew:,.0f}x as the NIC warmed"
        elif ratio > limits.ratio_max:
            level, why = "warn", "stands alone but stayed flat as the NIC warmed"
        elif ratio > limits.warn_ratio:
            level, why = "warn", f"{ratio:,.0f}x its neighbours, below the fail level"
        if level is not None:
            w = ws[i]
            out.append(LaneFinding(lane, level, rate, median, w.start_s, w.end_s, top, grew, why))
    return out
