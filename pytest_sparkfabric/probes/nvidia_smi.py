"""``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``: one line per GPU.

A field the GPU cannot report prints ``[N/A]`` or ``[Not Supported]`` (GB10 reports N/A for
some, e.g. memory.used on its unified memory); those become None, never zero.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError

QUERY_FIELDS = ("temperature.gpu", "power.draw", "clocks.sm", "utilization.gpu")
_NUMBER = re.compile(r"^-?\d{1,9}(?:\.\d{1,9})?$")


@dataclass(frozen=True, slots=True)
class GpuSample:
    index: int
    temp_c: float | None
    power_w: float | None
    sm_clock_mhz: float | None
    utilization_pct: float | None


def build_gpu_query() -> shell.Command:
    return shell.join(
        ["nvidia-smi", "--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"]
    )


def _field(token: str) -> float | str | None:
    token = token.strip()
    if token.startswith("[") or token == "N/A":
        return None
    # Without "nounits" the unit follows the number ("45 C", "30.12 W", "1410 MHz", "0 %").
    number = token.split()[0] if token.split() else token
    if number and _NUMBER.match(number):
        value = float(number)
        return value if math.isfinite(value) else None
    return "bad"


def parse_gpu_query(text: str) -> tuple[GpuSample, ...]:
    samples: list[GpuSample] = []
    for line in text.splitlines():
        tokens = line.split(",")
        if len(tokens) != len(QUERY_FIELDS):
            continue
        values = [_field(t) for t in tokens]
        if any(isinstance(v, str) for v in values):
            continue
        nums = [v if isinstance(v, float) else None for v in values]
        samples.append(GpuSample(len(samples), nums[0], nums[1], nums[2], nums[3]))
    if not samples:
        raise ParseError(
            "nvidia-smi", "no 'temp, power, clock, util' CSV line (is the driver loaded?)"
        )
    return tuple(samples)
