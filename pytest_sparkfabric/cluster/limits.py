"""The thresholds one cluster is judged by: the defaults for its topology and size, with
cluster.yaml's overrides, each saying where it came from (`thresholds.py` holds the table)."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_sparkfabric.cluster.model import Cluster
from pytest_sparkfabric.cluster.thresholds import Threshold, ThresholdName, defaults, message_bytes


def resolve(cluster: Cluster) -> Mapping[ThresholdName, Threshold]:
    """Defaults for this cluster with cluster.yaml's overrides applied."""
    table = defaults(cluster.topology, len(cluster.nodes), message_bytes(cluster.spec.nccl.size))
    src = str(cluster.source.name) if cluster.source else "cluster.yaml"
    for name, value in cluster.spec.thresholds.items():
        t, line = table[name], cluster.line_of(("thresholds", name))
        table[name] = Threshold(
            name, value, t.kind, t.unit, f"set in {src}:{line}" if line else f"set in {src}"
        )
    return table
