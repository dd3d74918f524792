"""The schedule as the bandwidth phases run it, over clusters `sparkfabric init` writes: every
node sends and receives on every rail, servers never share a port, `legs` stays within 3 rounds
at any size (its exact count: test_schedule.test_legs_at_every_size), and a fault on any one node
of a switch is localized to that node from the planner's own transfers (every role and rail:
test_schedule_localize.test_switch_node_fault_is_named)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.cluster.initgen import generate, node_names
from pytest_sparkfabric.cluster.plan import plan
from pytest_sparkfabric.measure import bwplan
from pytest_sparkfabric.measure.localize import Outcome, localize


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
    for tests in bwplan.rail_tests(p, schedule):
        ports = [(t.dst.node, bwplan.port(18515, t)) for t in tests]
        assert len(ports) == len(set(ports)), "two servers on one node and port in one round"
        sent |= {(t.src.node, t.src.port, t.src.index) for t in tests}
        got |= {(t.dst.node, t.dst.port, t.dst.index) for t in tests}
    rails = {(r.node, r.port, r.index) for r in cluster.rails}
    assert sent == rails and got == rails
    if kind == "legs" and directions == "together":
        assert len(schedule.rounds) <= 3
    # The pings and the items follow the same pairs, both ways.
    directed = bwplan.directed_links(cluster, p)
    assert len(directed) == 2 * sum(len(x.links) for x in bwplan.measured_pairs(p, schedule))


@settings(max_examples=30, deadline=None)
@given(st.integers(4, 64), st.data(), st.sampled_from(["receive", "send"]))
def test_a_fault_on_any_one_node_is_localized_to_it(n: int, data: st.DataObject, side: str) -> None:
    """Outcomes as the phase would see them with one node's direction broken on both rails (an
    egress cap toward it: receive), then the third-partner re-tests: that node, and only it."""
    cluster = cluster_of("switch", n)
    p = plan(cluster)
    x = data.draw(st.sampled_from([node.name for node in cluster.nodes]))

    def passed(src: str, dst: str) -> bool:
        return not (dst == x if side == "receive" else src == x)

    outcomes = [
        Outcome(t.src.node, t.dst.node, passed(t.src.node, t.dst.node), t.link.rail)
        for tests in bwplan.rail_tests(p, bwplan.build(cluster, p))
        for t in tests
    ]
    found = localize(outcomes, bwplan.cables_of(p))
    assert [s.nodes for s in found.suspects] == [(x,)]
    retests = found.retests()
    assert retests.rounds, "a switch of 4+ nodes always has a third partner to confirm with"
    for t in retests.transfers:
        outcomes += [Outcome(t.src, t.dst, passed(t.src, t.dst), r) for r in (0, 1)]
    confirmed = localize(outcomes, bwplan.cables_of(p))
    assert [(s.nodes, s.confirmed) for s in confirmed.suspects] == [((x,), True)]
    assert not confirmed.undecided
