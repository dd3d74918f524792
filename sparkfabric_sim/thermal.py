"""Temperatures under GPU load, and the marginal-lane error rate that follows NIC temperature.

First-order thermal model: under load a temperature approaches its loaded value with time
constant tau, and falls back the same way. Figures follow DOMAIN.md section 6: the GPU heads
toward ~80 C, the NIC reaches ~81 C about 3 minutes into a burn, and the failing cable's lane
went from ~2.9k to ~11.7M corrected bits/s between the onset and 81 C, then the link dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

Interval = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Profile:
    idle_c: float
    loaded_c: float
    tau_s: float

    def at(self, level: float) -> float:
        return self.idle_c + (self.loaded_c - self.idle_c) * level


GPU = Profile(idle_c=41.0, loaded_c=79.0, tau_s=45.0)
NIC = Profile(idle_c=58.0, loaded_c=83.0, tau_s=75.0)
MODULE_BELOW_NIC_C = 7.0

LANE_START_PER_S = 2.9e3
LANE_END_PER_S = 11.7e6
DROP_ABOVE_ONSET_C = 3.0
RETRAIN_BELOW_DROP_C = 1.0
UNCORRECTABLE_ABOVE_PER_S = 1e6
UNCORRECTABLE_FRACTION = 1e-5


def merged(intervals: Sequence[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def load_level(intervals: Sequence[Interval], t: float, tau_s: float) -> float:
    """0 (cold) .. 1 (settled at the loaded temperature) at time t."""
    level, now = 0.0, 0.0
    for start, end in merged(intervals):
        if start >= t:
            break
        level *= math.exp(-max(0.0, start - now) / tau_s)
        stop = min(end, t)
        level = 1.0 - (1.0 - level) * math.exp(-(stop - start) / tau_s)
        now = stop
    return level * math.exp(-max(0.0, t - now) / tau_s)


def lane_rate_per_s(temp_c: float, onset_c: float) -> float:
    """Corrected bits/s on the marginal lane beyond the cable's normal trickle."""
    if temp_c < onset_c:
        return 0.0
    span = min(1.2, (temp_c - onset_c) / DROP_ABOVE_ONSET_C)
    return float(LANE_START_PER_S * (LANE_END_PER_S / LANE_START_PER_S) ** span)


@dataclass
class LaneHistory:
    """Integrated marginal-lane errors up to `until`, and the link's outages so far.

    The link drops when the NIC passes onset + 3 C and retrains once it has cooled 1 C below
    that, so an outage lasts while the box stays hot (each one counts a link-down).
    """

    until: float = 0.0
    corrected: float = 0.0
    uncorrectable: float = 0.0
    outages: list[list[float]] = field(default_factory=list)

    def down_at(self, t: float) -> bool:
        return any(start <= t < end for start, end in self.outages)

    def drops_before(self, t: float) -> int:
        return sum(1 for start, _ in self.outages if start <= t)

    def down_seconds(self, t: float) -> float:
        return sum(max(0.0, min(end, t) - start) for start, end in self.outages if start <= t)


STEP_S = 1.0


def advance_lane(
    h: LaneHistory, intervals: Sequence[Interval], t: float, onset_c: float, offset_c: float
) -> LaneHistory:
    """Integrate the marginal lane from h.until to t (in place)."""
    while h.until < t:
        step = min(STEP_S, t - h.until)
        mid = h.until + step / 2
        temp = NIC.at(load_level(intervals, mid, NIC.tau_s)) + offset_c
        if h.outages and math.isinf(h.outages[-1][1]):
            if temp < onset_c + DROP_ABOVE_ONSET_C - RETRAIN_BELOW_DROP_C:
                h.outages[-1][1] = h.until
        elif temp >= onset_c + DROP_ABOVE_ONSET_C:
            h.outages.append([h.until, math.inf])
        else:
            rate = lane_rate_per_s(temp, onset_c)
            h.corrected += rate * step
            if rate > UNCORRECTABLE_ABOVE_PER_S:
                excess = rate - UNCORRECTABLE_ABOVE_PER_S
                h.uncorrectable += excess * UNCORRECTABLE_FRACTION * step
        h.until += step
    return h
