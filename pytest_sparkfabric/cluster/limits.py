"""The thresholds one cluster is judged by: the defaults for its topology and size, with
cluster.yaml's overrides, each saying where it came from (`thresholds.py` holds the table)."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_sparkfabric.cluster.model import Cluster, Rail
from pytest_sparkfabric.cluster.thresholds import Threshold, ThresholdName, defaults, message_bytes


def resolve(cluster: Cluster) -> Mapping[ThresholdName, Threshold]:
    """Defaults for this cluster with cluster.yaml's overrides applied."""
    spec = cluster.spec
    table = defaults(
        cluster.topology,
        len(cluster.nodes),
        message_bytes(spec.nccl.size),
        spec.bandwidth.directions,
    )
    src = str(cluster.source.name) if cluster.source else "cluster.yaml"
    for name, value in cluster.spec.thresholds.items():
        t, line = table[name], cluster.line_of(("thresholds", name))
        table[name] = Threshold(
            name,
            value,
            t.kind,
            t.unit,
            f"set in {src}:{line}" if line else f"set in {src}",
            fixed=True,
        )
    return table


def declared_mbps(*rails: Rail) -> int:
    """The declared speed a measurement over these rails is judged at: the slowest of them
    (a path is as fast as its slowest declared link)."""
    return min(r.link_speed_mbps for r in rails)
