"""The plan of each topology: cables, links, pairs, subnets, and the test items they make."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.cluster import parse_cluster, plan
from tests.cluster.samples import DIRECT, RING, VALID


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("direct", dict(node=2, rail=4, roce_device=4, link=2, directed_link=4, node_pair=1)),
        ("mesh", dict(node=3, rail=12, roce_device=12, link=6, directed_link=12, node_pair=3)),
        ("ring", dict(node=4, rail=16, roce_device=16, link=8, directed_link=16, node_pair=4)),
        ("switch", dict(node=3, rail=6, roce_device=6, link=6, directed_link=12, node_pair=3)),
    ],
)
def test_item_counts(name: str, counts: dict[str, int]) -> None:
    cluster = parse_cluster(VALID[name])
    assert plan.item_counts(cluster) == {**counts, "switch": int(name == "switch")}
    assert set(plan.item_counts(cluster)) == set(plan.ITEM_KINDS)


def test_ring_plan_links_neighbours_only() -> None:
    p = plan.plan(parse_cluster(RING))
    ring = [(i, i % 4 + 1) for i in range(1, 5)]  # spark-4 closes the ring to spark-1
    assert [c.id for c in p.cables] == [f"spark-{a}:p0<->spark-{b}:p1" for a, b in ring]
    assert {pair.id for pair in p.pairs} == {f"spark-{a}<->spark-{b}" for a, b in ring}
    assert len(p.subnets) == 8
    first = p.links[0]
    assert (first.id, str(first.subnet)) == (
        "spark-1:p0rail0<->spark-2:p1rail0",
        "192.168.100.0/24",
    )


def test_direct_plan_one_subnet_per_rail() -> None:
    p = plan.plan(parse_cluster(DIRECT))
    assert [str(s) for s in p.subnets] == ["192.168.100.0/24", "192.168.101.0/24"]
    two = ["spark-1:rail0->spark-2:rail0", "spark-2:rail0->spark-1:rail0"]
    assert [d.id for d in p.directed][:2] == two
