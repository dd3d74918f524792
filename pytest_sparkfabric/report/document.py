"""The run's results document, put together once at its end."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_sparkfabric.results import (
    Cause,
    ClusterInfo,
    Counts,
    Item,
    NodeInfo,
    Results,
    verdict_of,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric


def cluster_info(cluster: Cluster) -> ClusterInfo:
    name = Path(cluster.source).name if cluster.source else "cluster.yaml"
    return ClusterInfo(
        name=Path(name).stem,
        path=str(cluster.source) if cluster.source else None,
        topology=cluster.topology,
        transport=cluster.spec.transport,
        nodes=tuple(NodeInfo(name=n.name, ports=tuple(n.ports)) for n in cluster.nodes),
        switch=str(cluster.spec.switch.host) if cluster.spec.switch else None,
    )


def build(
    cluster: Cluster,
    *,
    items: Sequence[Item],
    causes: Sequence[Cause],
    fabric: Fabric | None,
    started: datetime,
    duration_s: float,
    interrupted: bool = False,
    safety: Sequence[str] = (),
) -> Results:
    """The document of a run's items, root causes and what its fabric measured."""
    from pytest_sparkfabric.measure import figures, preflight

    measured = figures.measurements(fabric) if fabric is not None else []
    return Results(
        verdict=verdict_of(Counts.of(i.outcome for i in items), interrupted=interrupted),
        interrupted=interrupted,
        cluster=cluster_info(cluster),
        started=started,
        duration_s=round(max(0.0, duration_s), 3),
        causes=tuple(causes),
        items=tuple(items),
        measurements=tuple(measured),
        cables=tuple(figures.cables(fabric, items, measured)) if fabric is not None else (),
        phases=tuple(figures.phases(fabric)) if fabric is not None else (),
        preflight=preflight.document(fabric) if fabric is not None else (),
        thresholds=figures.thresholds(fabric) if fabric is not None else {},
        safety=tuple(safety),
    )
