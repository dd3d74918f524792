"""Threshold names, defaults per topology and size, and overrides that say where they came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sparkfabric.cluster import load_cluster, parse_cluster
from pytest_sparkfabric.cluster.limits import resolve
from pytest_sparkfabric.cluster.thresholds import _BASE, NAMES, defaults
from tests.cluster.samples import DIRECT, RING, SWITCH


def test_every_name_has_one_default() -> None:
    assert [t.name for t in _BASE] == list(NAMES)


@pytest.mark.parametrize(
    ("text", "busbw", "source"),
    [
        (DIRECT, 19, "2-node field reports"),
        (SWITCH, 20, "4 tuned nodes through a switch"),
        (RING, 10, "NVIDIA setup script floor for a ring"),
    ],
)
def test_defaults_follow_topology_and_size(text: str, busbw: float, source: str) -> None:
    t = resolve(parse_cluster(text))["nccl_busbw_gbytes_s"]
    assert (t.value, t.kind) == (busbw, "min")
    assert source in t.source and t.source.startswith("default: ")


def test_an_override_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(DIRECT + "thresholds:\n  rail_rdma_gbps: 90\n", encoding="utf-8")
    table = resolve(load_cluster(path))
    t = table["rail_rdma_gbps"]
    assert (t.value, t.source) == (90, "set in lab.yaml:12")
    assert t.describe() == "expected >= 90 Gb/s (set in lab.yaml:12)"
    assert table["pair_rdma_gbps"] == defaults("direct", 2)["pair_rdma_gbps"]
