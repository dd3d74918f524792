"""What the report's renderers draw: small frozen values, no pytest, no session, no I/O.

`report.build` makes them from a results document (`pytest_sparkfabric.results`); the
renderers (`banner`, `picture`, `charts`, `inventory`, `page`) take only these. Object ids use the
suite's own spelling (`spark-1`, `spark-1:p0`, `spark-1:p0rail1`, `A<->B` for a link or a cable,
`A->B` for a direction, `switch:LEG` for a switch leg); `report.objects` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pytest_sparkfabric.results import (
    Cable,
    Cause,
    Counts,
    Item,
    Phase,
    PreflightNode,
    Status,
    Topology,
    Verdict,
)

Sensor = Literal["nic", "gpu"]


@dataclass(frozen=True, slots=True)
class Summary:
    verdict: Verdict
    cluster: str
    topology: Topology
    nodes: int
    started: datetime | None
    duration_s: float | None
    counts: Counts
    transport: str | None = None
    phases: tuple[Phase, ...] = ()
    safety: tuple[str, ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()
    """(item id, warning text) of each warning a passing check gave."""


# -- the fabric as cabled -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class End:
    """One end of a cable: a node's QSFP port (`p0`, `p1`) or a switch leg (node None)."""

    node: str | None
    port: str

    @property
    def label(self) -> str:
        return f"{self.node}:{self.port}" if self.node is not None else f"switch:{self.port}"


@dataclass(frozen=True, slots=True)
class RailState:
    """One rail (PCIe half) carried by a cable: its worst verdict and measured values."""

    rail: int
    status: Status
    notes: tuple[str, ...] = ()
    elsewhere: bool = False
    """Everything that failed here is explained by a root cause that names other objects (a
    collateral failure: drawn dashed, not solid)."""


@dataclass(frozen=True, slots=True)
class FabricNode:
    name: str
    status: Status
    notes: tuple[str, ...] = ()
    causes: tuple[int, ...] = ()
    """Numbers (1-based, in the banner's order) of the root causes that name this node."""
    elsewhere: bool = False
    """Everything that failed here is explained by a root cause that names other objects (a
    collateral failure: drawn dashed, not solid)."""


@dataclass(frozen=True, slots=True)
class FabricCable:
    """One cable of the plan (`id`), drawn where it was found to run (`a`, `b`)."""

    id: str
    a: End
    b: End
    status: Status
    notes: tuple[str, ...] = ()
    rails: tuple[RailState, ...] = ()
    causes: tuple[int, ...] = ()
    elsewhere: bool = False
    """Everything that failed here is explained by a root cause that names other objects (a
    collateral failure: drawn dashed, not solid)."""
    planned: tuple[End, End] | None = None
    """The plan's ends, where the cable was found elsewhere (LLDP): a wrong cable."""
    serial: str | None = None


@dataclass(frozen=True, slots=True)
class Fabric:
    """Nodes in cluster.yaml order; cables as cabled (a ring is drawn by following them)."""

    topology: Topology
    nodes: tuple[FabricNode, ...]
    cables: tuple[FabricCable, ...]
    switch: str | None = None


# -- charts -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BwCell:
    src: str
    dst: str
    gbps: float


@dataclass(frozen=True, slots=True)
class BandwidthMatrix:
    """One rail's node x node bandwidth: row sends, column receives; the diagonal is loopback."""

    rail: int
    nodes: tuple[str, ...]
    cells: tuple[BwCell, ...]
    threshold_gbps: float | None = None
    loopback_threshold_gbps: float | None = None
    lost: tuple[tuple[str, str, Status], ...] = ()
    """(sender, receiver, status) of directions with no figure whose check failed or could not
    measure: drawn red or amber, never as "not in this schedule"."""


@dataclass(frozen=True, slots=True)
class BusbwPoint:
    size_bytes: int
    busbw_gbytes_s: float


@dataclass(frozen=True, slots=True)
class BusbwSeries:
    op: str
    points: tuple[BusbwPoint, ...]
    ranks: int | None = None


@dataclass(frozen=True, slots=True)
class NcclChart:
    series: tuple[BusbwSeries, ...]
    floor_gbytes_s: float | None = None


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    t_s: float
    value: float


@dataclass(frozen=True, slots=True)
class LaneSeries:
    """Corrected bits per second on one lane of one rail (`spark-1:p0rail1`) over the soak."""

    rail: str
    lane: int
    points: tuple[SeriesPoint, ...]
    outlier: bool = False


@dataclass(frozen=True, slots=True)
class TempSeries:
    node: str
    sensor: Sensor
    points: tuple[SeriesPoint, ...]
    outlier: bool = False


@dataclass(frozen=True, slots=True)
class Soak:
    lanes: tuple[LaneSeries, ...] = ()
    temps: tuple[TempSeries, ...] = ()
    lane_ratio_max: float | None = None
    lane_floor_per_s: float | None = None


# -- the cable inventory ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CableRow:
    """One cable's acceptance record (across runs a cable is known by its serial) and its
    verdict in the table: failed where it was found elsewhere than the plan says."""

    cable: Cable
    status: Status


@dataclass(frozen=True, slots=True)
class Report:
    summary: Summary
    causes: tuple[Cause, ...]
    items: tuple[Item, ...]
    fabric: Fabric
    bandwidth: tuple[BandwidthMatrix, ...] = ()
    nccl: NcclChart | None = None
    soak: Soak | None = None
    cables: tuple[CableRow, ...] = ()
    preflight: tuple[PreflightNode, ...] = ()
