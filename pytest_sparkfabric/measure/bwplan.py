"""Which node pairs the bandwidth phases measure, in which rounds and directions (pure): the
schedule laid over every node of cluster.yaml, so item ids do not depend on which nodes answer; the
k-th server of a round on a node listens k x rails above the base port."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.measure import schedule as sched

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink, Link, NodePair, Plan

Direction = Literal["a->b", "b->a"]


@dataclass(frozen=True, slots=True)
class RailTest:
    """One client/server test on one rail: `src` sends to `dst` over `link` (a loopback: a link
    of the rail to itself)."""

    link: Link
    direction: Direction
    src: Rail
    dst: Rail
    round: int
    offset: int
    """Its server's port above the phase's base (the k-th server on a node in a round)."""

    @property
    def key(self) -> tuple[str, Direction]:
        return (self.link.id, self.direction)


def cables_of(plan: Plan) -> list[tuple[str, str]] | None:
    """The pairs that can test: None behind a switch (any two), else the cabled pairs."""
    return None if plan.topology == "switch" else [(p.a, p.b) for p in plan.pairs]


def build(cluster: Cluster, plan: Plan) -> sched.Schedule:
    """The schedule cluster.yaml asks for, over all its nodes."""
    bw = cluster.spec.bandwidth
    mode: sched.Mode = "bidirectional" if bw.directions == "together" else "directed"
    return sched.build(bw.schedule, [n.name for n in cluster.nodes], cables_of(plan), mode)


def measured_pairs(plan: Plan, schedule: sched.Schedule) -> tuple[NodePair, ...]:
    """The plan's node pairs the schedule measures (in either direction), in plan order."""
    wanted = {frozenset((t.src, t.dst)) for t in schedule.transfers}
    return tuple(p for p in plan.pairs if frozenset((p.a, p.b)) in wanted)


def directed_links(cluster: Cluster, plan: Plan) -> tuple[DirectedLink, ...]:
    """Both directions of every rail link of the measured pairs: what the pings prove. Behind a
    switch that is every leg both ways with two partners (`legs`), not every pair (`full`)."""
    from pytest_sparkfabric.cluster.plan import DirectedLink

    return tuple(
        DirectedLink(*ends)
        for pair in measured_pairs(plan, build(cluster, plan))
        for link in pair.links
        for ends in ((link.a, link.b), (link.b, link.a))
    )


def rail_tests(plan: Plan, schedule: sched.Schedule, first: int = 1) -> Iterator[list[RailTest]]:
    """Each round's one-rail tests (numbered from `first`): every direction of every transfer,
    on every rail of the pair, all at once (a `both_ways` transfer is two one-way tests)."""
    index = {frozenset((p.a, p.b)): p for p in plan.pairs}
    for k, transfers in enumerate(schedule.rounds, first):
        servers: Counter[str] = Counter()
        out: list[RailTest] = []
        for t in transfers:
            for src, dst in t.directions():
                pair = index[frozenset((src, dst))]
                direction: Direction = "a->b" if src == pair.a else "b->a"
                slot = servers[dst]
                servers[dst] += 1
                for link in pair.links:
                    a, b = (link.a, link.b) if direction == "a->b" else (link.b, link.a)
                    offset = slot * hardware.RAILS_PER_PORT + link.rail
                    out.append(RailTest(link, direction, a, b, k, offset))
        yield out


def port(base: int, test: RailTest) -> int:
    return base + test.offset
