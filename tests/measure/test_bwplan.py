"""The schedule as the bandwidth phases run it, over clusters `sparkfabric init` writes: every
node sends and receives on every rail, servers never share a port, `legs` stays within 3 rounds
at any size (its exact count: test_schedule.test_legs_at_every_size), and the rail tests are the
schedule's directions on every rail of the pair, so a fault on any one node of a switch is
localized from them as from the schedule (every role, rail and mode, with the third-partner
confirmation: test_schedule_localize.test_switch_node_fault_is_named)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.cluster.initgen import generate, node_names
from pytest_sparkfabric.cluster.plan import plan
from pytest_sparkfabric.measure import bwplan


def cluster_of(topology: str, n: int, schedule: str = "legs", directions: str = "together") -> Any:
    data = yaml.safe_load(generate(topology, node_names(str(n)), transport="sim"))
    data["bandwidth"] = {"schedule": schedule, "directions": directions}
    return parse_cluster(yaml.safe_dump(data, sort_keys=False))


@st.composite
def clusters(draw: st.DrawFn) -> tuple[str, int, str, str]:
    topology = draw(st.sampled_from(["switch", "ring", "direct", "mesh"]))
    n = {
        "switch": draw(st.integers(2, 128)),
        "ring": draw(st.integers(4, 70)),
        "direct": 2,
        "mesh": 3,
    }[topology]
    schedule = draw(st.sampled_from(["legs", "full", "stress"] if n <= 24 else ["legs", "stress"]))
    return topology, n, schedule, draw(st.sampled_from(["together", "apart"]))


@settings(max_examples=40, deadline=None)
@given(clusters())
def test_every_node_sends_and_receives_on_every_rail(case: tuple[str, int, str, str]) -> None:
    topology, n, kind, directions = case
    cluster = cluster_of(topology, n, kind, directions)
    p = plan(cluster)
    schedule = bwplan.build(cluster, p)
    sent: set[tuple[str, int, int]] = set()
    got: set[tuple[str, int, int]] = set()
    tested: list[tuple[str, str, int]] = []
    for tests in bwplan.rail_tests(p, schedule):
        ports = [(t.dst.node, bwplan.port(18515, t)) for t in tests]
        assert len(ports) == len(set(ports)), "two servers on one node and port in one round"
        sent |= {(t.src.node, t.src.port, t.src.index) for t in tests}
        got |= {(t.dst.node, t.dst.port, t.dst.index) for t in tests}
        tested += [(t.src.node, t.dst.node, t.link.rail) for t in tests]
    pairs = {frozenset((x.a, x.b)): x for x in p.pairs}
    want = [(a, b, k.rail) for a, b in schedule.directed() for k in pairs[frozenset((a, b))].links]
    assert sorted(tested) == sorted(want)
    assert (bwplan.cables_of(p) is None) == (topology == "switch")
    rails = {(r.node, r.port, r.index) for r in cluster.rails}
    assert sent == rails and got == rails
    if kind == "legs" and directions == "together":
        assert len(schedule.rounds) <= 3
    # The pings and the items follow the same pairs, both ways.
    directed = bwplan.directed_links(cluster, p)
    assert len(directed) == 2 * sum(len(x.links) for x in bwplan.measured_pairs(p, schedule))
