"""Pass/fail limits: defaults per topology and node count, each with where it came from.

Numbers are field reports, not specifications (DOMAIN.md §5), so every one can be overridden under
`thresholds:` in cluster.yaml, and a failure always prints the value and its source.

How the defaults were chosen (DOMAIN.md §4-6):

- RDMA, one rail, node to node: healthy 92-98 Gb/s with 1 QP, 105-112 with 4; NVIDIA's own gate is
  80. The bad signatures sit far below (8-25 throttled, ~10 switch CPU, ~5 PFC stall), so 80.
- Loopback, one rail: healthy ~106, throttled ~13 (8-25): 80 separates them with room.
- Both rails of a pair at once: healthy 185-198, NVIDIA Sync's lower bound 184, one half only
  100-110. 180 is the Sync bound less 2% run-to-run noise.
- TCP, parallel streams on both halves: 185-198 healthy, 100-110 for one half, ~10 for software
  forwarding. TCP costs CPU on the GB10's cores, so 160 leaves room for a busy box.
- NCCL all-reduce bus bandwidth: 2 nodes 19-23.8 GB/s (one rail ~13.9, Socket a few GB/s), so
  19; 3-8 nodes through a switch 23-24 GB/s tuned (one build 23.33), so 20; ring and mesh: the
  NVIDIA setup script's ring floor, 10.
- Soak: pre-FEC BER a tenth of the RS(544,514) limit (~2.4e-4); a lane is marginal when its error
  rate is more than 100x the median of the other lanes in use (the failing cable's lane logged
  ~1000x), and at least 100x `lane_floor_per_s`, so lanes that log zero never make a tiny
  trickle look like a ratio of infinity. The floor sits near the healthy trickle (a few
  errors/s on a QSFP112 DAC, DOMAIN.md §6), not near thousands: the only warning the failing
  cable gave was one lane at ~2.9k errors/s, and 100 x 10/s = 1000/s flags it.
- Soak temperatures: the NIC must warm by at least `nic_rise_min_c` under the load (the field
  NIC went from idle to 81 C within 3 minutes of gpu-burn, DOMAIN.md §6; a NIC that stays cold
  means the soak proved nothing) and stay at or below `nic_temp_max_c`, the ~105 C warning
  threshold mlx5 reports as hwmon `temp*_crit` (FACTS.md §7, hwmon patch cover letter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeGuard, get_args

ThresholdName = Literal[
    "loopback_gbps",
    "rail_rdma_gbps",
    "pair_rdma_gbps",
    "tcp_pair_gbps",
    "nccl_busbw_gbytes_s",
    "ber_max",
    "lane_ratio_max",
    "lane_floor_per_s",
    "ping_loss_pct",
    "nic_temp_max_c",
    "nic_rise_min_c",
]
Kind = Literal["min", "max"]


@dataclass(frozen=True, slots=True)
class Threshold:
    name: ThresholdName
    value: float
    kind: Kind
    unit: str
    source: str

    def ok(self, measured: float) -> bool:
        return measured >= self.value if self.kind == "min" else measured <= self.value

    def expected(self) -> str:
        op = ">=" if self.kind == "min" else "<="
        return f"{op} {self.value:g} {self.unit}".rstrip()

    def describe(self) -> str:
        return f"expected {self.expected()} ({self.source})"


# fmt: off
_BASE: tuple[Threshold, ...] = (
    Threshold(
        "loopback_gbps", 80, "min", "Gb/s",
        "default: healthy NIC loopback ~106 Gb/s, throttled 8-25 Gb/s",
    ),
    Threshold(
        "rail_rdma_gbps", 80, "min", "Gb/s",
        "default: NVIDIA's own per-rail gate >= 80 Gb/s; healthy 92-112",
    ),
    Threshold(
        "pair_rdma_gbps", 180, "min", "Gb/s",
        "default: NVIDIA Sync lower bound 184",
    ),
    Threshold(
        "tcp_pair_gbps", 160, "min", "Gb/s",
        "default: parallel iperf3 on both halves reaches 185-198; one half 100-110",
    ),
    Threshold(
        "nccl_busbw_gbytes_s", 19, "min", "GB/s",
        "default: 2-node field reports 19-23.8 GB/s all-reduce busbw; one rail ~13.9",
    ),
    Threshold(
        "ber_max", 2.4e-5, "max", "",
        "default: a tenth of the RS(544,514) FEC limit ~2.4e-4",
    ),
    Threshold(
        "lane_ratio_max", 100, "max", "x",
        "default: the failing cable's hot lane logged ~1000x its neighbours",
    ),
    Threshold(
        "lane_floor_per_s", 10, "min", "errors/s",
        "default: near the healthy trickle of a few errors/s per lane; a lane below 100x this "
        "is never marginal, the failing cable's lane warned at ~2.9k/s",
    ),
    Threshold(
        "ping_loss_pct", 0, "max", "%",
        "default: a DF jumbo ping between healthy rails loses nothing",
    ),
    Threshold(
        "nic_temp_max_c", 105, "max", "C",
        "default: the mlx5 hwmon warning threshold (temp_crit) ~105 C",
    ),
    Threshold(
        "nic_rise_min_c", 5, "min", "C",
        "default: under gpu-burn the NIC warmed from idle to 81 C within 3 min in the field",
    ),
)

# (topology, fewest nodes, most nodes) -> {name: (value, source)}; later rows win.
_BY_TOPOLOGY: tuple[tuple[str, int, int, dict[ThresholdName, tuple[float, str]]], ...] = (
    ("direct", 2, 2, {
        "nccl_busbw_gbytes_s": (
            19, "default: 2-node field reports 19-23.8 GB/s all-reduce busbw; one rail ~13.9",
        ),
    }),
    ("switch", 2, 2, {
        "nccl_busbw_gbytes_s": (
            19, "default: 2-node field reports 19-23.8 GB/s all-reduce busbw; one rail ~13.9",
        ),
    }),
    ("switch", 3, 8, {
        "nccl_busbw_gbytes_s": (
            20, "default: 4 tuned nodes through a switch reach 23-24 GB/s (CPU forwarding 0.46)",
        ),
    }),
    ("ring", 4, 64, {
        "nccl_busbw_gbytes_s": (10, "default: NVIDIA setup script floor for a ring, 10 GB/s"),
    }),
    ("mesh", 3, 3, {
        "nccl_busbw_gbytes_s": (10, "default: NVIDIA setup script floor for a ring, 10 GB/s"),
    }),
)
# fmt: on

NAMES: tuple[ThresholdName, ...] = get_args(ThresholdName)


def is_threshold(name: str) -> TypeGuard[ThresholdName]:
    return name in NAMES


def defaults(topology: str, nodes: int) -> dict[ThresholdName, Threshold]:
    """The default table for a topology and node count (no overrides)."""
    table = {t.name: t for t in _BASE}
    for topo, lo, hi, values in _BY_TOPOLOGY:
        if topo != topology or not lo <= nodes <= hi:
            continue
        for name, (value, source) in values.items():
            t = table[name]
            table[name] = Threshold(name, value, t.kind, t.unit, source)
    return table
