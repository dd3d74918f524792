"""Threshold names, defaults per topology and size, and overrides that say where they came from."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from pytest_sparkfabric.cluster import load_cluster, parse_cluster
from pytest_sparkfabric.cluster.model import resolve
from pytest_sparkfabric.cluster.thresholds import (
    _BASE,
    BUSBW_FLOORS,
    GIB,
    MIB,
    ThresholdName,
    busbw_floor,
    defaults,
    message_bytes,
)
from tests.cluster.samples import DIRECT, SWITCH


def test_every_name_has_one_default() -> None:
    assert [t.name for t in _BASE] == list(get_args(ThresholdName))


@pytest.mark.parametrize(
    ("topology", "nodes", "size", "floor", "tag"),
    [
        ("direct", 2, 16 * GIB, 21.875, "default"),
        ("direct", 2, GIB, 17, "default"),
        ("switch", 4, 16 * GIB, 21.875, "default"),
        ("switch", 4, GIB, 17, "extrapolated"),
        ("switch", 8, 16 * GIB, 21.875, "extrapolated"),
        ("mesh", 3, 16 * GIB, 10, "default"),
        ("mesh", 3, 512 * MIB, 8.5, "extrapolated"),
        ("ring", 6, 16 * GIB, 10, "extrapolated"),
        ("direct", 2, 256 * MIB, 17, "default"),
        ("direct", 2, 128 * MIB, None, None),  # latency-bound: no published figure
    ],
)
def test_busbw_floor_by_topology_nodes_and_size(
    topology: str, nodes: int, size: int, floor: float | None, tag: str | None
) -> None:
    t = busbw_floor(topology, nodes, size)
    assert (t.value, t.source.split(":")[0]) == (floor, tag) if t else floor is None


def test_every_floor_row_names_its_source() -> None:
    for *_, floor, source, extrapolated in BUSBW_FLOORS:
        assert source and floor > 0
        assert extrapolated == any(w in source for w in ("carried over", "x 19/", "no measurement"))


def test_the_size_of_cluster_yaml_picks_the_floor() -> None:
    assert resolve(parse_cluster(SWITCH))["nccl_busbw_gbytes_s"].value == 21.875  # size 8G
    text = SWITCH.replace("size: 8G", "size: 1G")
    assert "size: 1G" in text
    t = resolve(parse_cluster(text))["nccl_busbw_gbytes_s"]
    assert t.value == 17
    assert message_bytes("16G") == 16 * GIB and message_bytes("512M") == 512 * MIB
    assert message_bytes("4096") == 4096 and message_bytes("1K") == 1024


def test_an_override_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(DIRECT + "thresholds:\n  rail_rdma_gbps: 90\n", encoding="utf-8")
    table = resolve(load_cluster(path))
    t = table["rail_rdma_gbps"]
    assert (t.value, t.source) == (90, "set in lab.yaml:12")
    assert t.describe() == "expected >= 90 Gb/s (set in lab.yaml:12)"
    assert table["pair_rdma_gbps"] == defaults("direct", 2)["pair_rdma_gbps"]


def test_together_has_its_own_full_duplex_floors_each_extrapolated() -> None:
    apart, together = defaults("direct", 2), defaults("direct", 2, directions="together")
    rows: tuple[tuple[ThresholdName, float, float], ...] = (
        ("rail_rdma_gbps", 80, 73),
        ("pair_rdma_gbps", 180, 165),
        ("tcp_pair_gbps", 160, 145),
    )
    for name, one_way, both_ways in rows:
        assert (apart[name].value, together[name].value) == (one_way, both_ways)
        assert together[name].source.startswith("extrapolated: ")
        assert "catharsis.net.au" in together[name].source
    assert together["loopback_gbps"] == apart["loopback_gbps"]  # no cable, no direction


def test_bandwidth_floors_scale_with_the_declared_speed_unless_set(tmp_path: Path) -> None:
    table = defaults("switch", 8)
    pair = table["pair_rdma_gbps"].at_speed(100_000)
    assert pair.value == 90 and pair.source.startswith("extrapolated: NVIDIA Sync")
    assert "x 0.5 for the declared 100G" in pair.source
    assert table["pair_rdma_gbps"].at_speed(200_000) is table["pair_rdma_gbps"]
    assert table["loopback_gbps"].at_speed(100_000) is table["loopback_gbps"]  # NIC, not cable
    path = tmp_path / "c.yaml"
    path.write_text(DIRECT + "thresholds:\n  pair_rdma_gbps: 150\n", encoding="utf-8")
    set_here = resolve(load_cluster(path))["pair_rdma_gbps"]
    assert set_here.at_speed(100_000) is set_here  # the operator's number stands as written
