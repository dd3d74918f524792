"""Pass/fail limits: defaults per topology and node count, each with where it came from.

Numbers are field reports, not specifications (DOMAIN.md §4-6), argued in docs/thresholds.md;
each can be overridden under `thresholds:`, and a failure prints the value and its source."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

GIB = 2**30
MIB = 2**20

# fmt: off
ThresholdName = Literal[
    "loopback_gbps", "rail_rdma_gbps", "pair_rdma_gbps", "tcp_pair_gbps", "nccl_busbw_gbytes_s",
    "ber_max", "lane_ratio_max", "lane_floor_per_s", "lane_warn_ratio", "lane_heat_growth_min",
    "ping_loss_pct", "nic_temp_max_c", "nic_rise_min_c", "discard_pct", "rdma_lat_us",
]
# fmt: on
Kind = Literal["min", "max"]


@dataclass(frozen=True, slots=True)
class Threshold:
    name: ThresholdName
    value: float
    kind: Kind
    unit: str
    source: str
    fixed: bool = False
    """Set in cluster.yaml: used as written, never scaled to a declared link speed."""

    def ok(self, measured: float) -> bool:
        return measured >= self.value if self.kind == "min" else measured <= self.value

    def expected(self) -> str:
        op = ">=" if self.kind == "min" else "<="
        return f"{op} {self.value:g} {self.unit}".rstrip()

    def describe(self) -> str:
        return f"expected {self.expected()} ({self.source})"

    def at_speed(self, speed_mbps: int) -> Threshold:
        """This floor for a link declared at `speed_mbps` (the defaults stand for 200G)."""
        if self.fixed or self.name not in SCALES_WITH_SPEED or speed_mbps == FULL_SPEED_MBPS:
            return self
        ratio = speed_mbps / FULL_SPEED_MBPS
        source = self.source.removeprefix("default: ").removeprefix("extrapolated: ")
        return replace(
            self,
            value=round(self.value * ratio, 3),
            source=f"extrapolated: {source}, x {ratio:g} for the declared "
            f"{speed_mbps // 1000}G (linear in line rate; no published Spark figure)",
        )


FULL_SPEED_MBPS = 200_000
"""The link speed the default floors were measured at (a Spark's whole QSFP port)."""
SCALES_WITH_SPEED: frozenset[ThresholdName] = frozenset(
    {"rail_rdma_gbps", "pair_rdma_gbps", "tcp_pair_gbps", "nccl_busbw_gbytes_s"}
)


# fmt: off
_BASE: tuple[Threshold, ...] = (
    Threshold("loopback_gbps", 80, "min", "Gb/s",
              "default: healthy NIC loopback ~106 Gb/s, throttled 8-25 Gb/s"),
    Threshold("rail_rdma_gbps", 80, "min", "Gb/s",
              "default: NVIDIA's own per-rail gate >= 80 Gb/s; healthy 92-112"),
    Threshold("pair_rdma_gbps", 180, "min", "Gb/s",
              "default: NVIDIA Sync lower bound 184"),
    Threshold("tcp_pair_gbps", 160, "min", "Gb/s",
              "default: parallel iperf3 on both halves reaches 185-198; one half 100-110"),
    Threshold("nccl_busbw_gbytes_s", 21.875, "min", "GB/s",
              "default: NVIDIA setup script floor 21.875 GB/s at 16 GiB (see BUSBW_FLOORS)"),
    Threshold("ber_max", 2.4e-5, "max", "",
              "default: a tenth of the RS(544,514) FEC limit ~2.4e-4"),
    Threshold("lane_ratio_max", 100, "max", "x",
              "default: the failing cable's hot lane logged ~1000x its neighbours"),
    Threshold("lane_floor_per_s", 10, "min", "errors/s",
              "default: near the healthy trickle of a few errors/s per lane; a lane below 100x "
              "this is never marginal, the failing cable's lane warned at ~2.9k/s"),
    Threshold("lane_warn_ratio", 10, "max", "x",
              "default: a tenth of lane_ratio_max; healthy PAM4 lanes trickle within a few x of "
              "each other, so 10x is worth a look (a warning, never a failure)"),
    Threshold("lane_heat_growth_min", 2, "min", "x",
              "default: the failing cable's lane grew from a few/s to ~2.9k/s and on to 11.7M/s as "
              "the NIC warmed to 81 C; a healthy trickle stays within noise of its cool rate"),
    Threshold("ping_loss_pct", 0, "max", "%",
              "default: a DF jumbo ping between healthy rails loses nothing"),
    Threshold("nic_temp_max_c", 105, "max", "C",
              "default: the mlx5 hwmon warning threshold (temp_crit) ~105 C"),
    Threshold("nic_rise_min_c", 5, "min", "C",
              "default: under gpu-burn the NIC warmed from idle to 81 C within 3 min in the field"),
    Threshold("discard_pct", 0.1, "max", "%",
              "default: no published figure; a lossy RoCE rail that drops more than 1 frame in "
              "1000 under load retransmits visibly (chosen, override when your fabric is known)"),
    Threshold("rdma_lat_us", 5, "max", "us",
              "default: ib_write_lat 2 B between two GB10s over one cable t_avg 1.47 us "
              "(eugr/spark-vllm-docker NETWORKING.md); 5 leaves room for a switch hop, not for "
              "software forwarding"),
)

# With `directions: together` each port sends and receives at once. The one published
# full-duplex run of two Sparks (catharsis.net.au, "From 96 to 340 Gbit/s") moved ~340 Gb/s,
# ~170 each way, against 185-198 one-way: each one-way floor is carried over x 170/185.1 (the
# seed's one-way figure); the one-way floors already hold their noise margin.
_DUPLEX = "x 170/185.1: one published full-duplex run ~170 Gb/s each way (catharsis.net.au)"
TOGETHER: tuple[Threshold, ...] = (
    Threshold("rail_rdma_gbps", 73, "min", "Gb/s",
              f"extrapolated: NVIDIA's per-rail gate 80 {_DUPLEX}"),
    Threshold("pair_rdma_gbps", 165, "min", "Gb/s",
              f"extrapolated: the one-way pair floor 180 {_DUPLEX}"),
    Threshold("tcp_pair_gbps", 145, "min", "Gb/s",
              f"extrapolated: the one-way TCP floor 160 {_DUPLEX}"),
)

# fmt: on

Directions = Literal["apart", "together"]


def defaults(
    topology: str,
    nodes: int,
    nccl_size_bytes: int = 16 * GIB,
    directions: Directions = "apart",
) -> dict[ThresholdName, Threshold]:
    """The default table for a topology and node count (no overrides); the NCCL floor is the
    one for `nccl_size_bytes` (cluster.yaml nccl.size) from `BUSBW_FLOORS`; `together`
    (bandwidth.directions) takes the full-duplex rows of `TOGETHER`."""
    together = TOGETHER if directions == "together" else ()
    rows = (*_BASE, *together, busbw_floor(topology, nodes, nccl_size_bytes))
    return {t.name: t for t in rows if t is not None}  # later rows replace earlier ones


_LARGE = 8 * GIB
_MEDIUM = 256 * MIB
_NO_MAX = 2**62
_NVIDIA = "NVIDIA spark_cluster_setup.py MIN_NCCL_TEST_BW 21.875 GB/s, all_gather 16 GiB"
_NVIDIA_RING = "NVIDIA spark_cluster_setup.py MIN_NCCL_TEST_BW_RING 10 GB/s (3 nodes), 16 GiB"
_MEASURED_2 = "measured 2 nodes ~19 GB/s at 256 MiB-1 GiB (NCCL 2.28.9, field report), less 10%"
# fmt: off
# (topology, nodes from, nodes to, size from, size below (bytes), floor GB/s, source, extrapolated)
BUSBW_FLOORS: tuple[tuple[str, int, int, int, int, float, str, bool], ...] = (
    ("direct", 2, 2, _LARGE, _NO_MAX, 21.875, f"{_NVIDIA}; measured 22.96-23.76 at 16 GiB", False),
    ("direct", 2, 2, _MEDIUM, _LARGE, 17, _MEASURED_2, False),
    ("switch", 2, 4, _LARGE, _NO_MAX, 21.875, f"{_NVIDIA}; measured 23-24 at 4 nodes", False),
    ("switch", 5, 128, _LARGE, _NO_MAX, 21.875,
     f"{_NVIDIA} (any switched size per NVIDIA; no measurement above 4 nodes)", True),
    ("switch", 2, 2, _MEDIUM, _LARGE, 17, _MEASURED_2, False),
    ("switch", 3, 128, _MEDIUM, _LARGE, 17, f"{_MEASURED_2}; carried over from 2 nodes", True),
    ("mesh", 3, 3, _LARGE, _NO_MAX, 10, _NVIDIA_RING, False),
    ("mesh", 3, 3, _MEDIUM, _LARGE, 8.5,
     f"{_NVIDIA_RING} x 19/21.875 (the 2-node medium/large ratio)", True),
    ("ring", 4, 128, _LARGE, _NO_MAX, 10,
     f"{_NVIDIA_RING}, carried over to rings of 4+ (no measurement)", True),
    ("ring", 4, 128, _MEDIUM, _LARGE, 8.5,
     f"{_NVIDIA_RING} x 19/21.875, carried over to rings of 4+", True),
)
# fmt: on


def message_bytes(size: str) -> int:
    """nccl-tests' size syntax (cluster.yaml nccl.size: digits and an optional K, M or G)."""
    unit = {"K": 2**10, "M": MIB, "G": GIB}.get(size[-1:].upper(), 1)
    digits = size[:-1] if unit != 1 else size
    return int(digits) * unit


def busbw_floor(topology: str, nodes: int, size_bytes: int) -> Threshold | None:
    """The NCCL busbw floor at this message size, or None where no row covers it (below
    256 MiB the run is latency-bound and no figure has been published)."""
    for topo, low, high, small, large, floor, source, extrapolated in BUSBW_FLOORS:
        if topo == topology and low <= nodes <= high and small <= size_bytes < large:
            tag = "extrapolated" if extrapolated else "default"
            return Threshold("nccl_busbw_gbytes_s", floor, "min", "GB/s", f"{tag}: {source}")
    return None
