"""The thresholds one cluster is judged by: the defaults for its topology and size, with
cluster.yaml's overrides, each saying where it came from (`thresholds.py` holds the table)."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_sparkfabric.cluster.model import Cluster
from pytest_sparkfabric.cluster.thresholds import (
    Threshold,
    ThresholdName,
    defaults,
    is_threshold,
    message_bytes,
)


def resolve(cluster: Cluster) -> Mapping[ThresholdName, Threshold]:
    """Defaults for this cluster with cluster.yaml's overrides applied."""
    size = message_bytes(cluster.spec.nccl.size)
    table = defaults(cluster.topology, len(cluster.nodes), size)
    src = str(cluster.source.name) if cluster.source else "cluster.yaml"
    for name, value in cluster.spec.thresholds.items():
        if not is_threshold(name):
            raise KeyError(name)  # parse_cluster refuses such a file: only a hand-made Cluster
        t = table[name]
        line = cluster.line_of(("thresholds", name))
        where = f"{src}:{line}" if line else src
        table[name] = Threshold(name, value, t.kind, t.unit, f"set in {where}")
    return table
