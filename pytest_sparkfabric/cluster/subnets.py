"""The subnet plan of each topology, checked on a valid cluster whose cabling is sound.

direct and switch: one subnet per rail, each node one address in each. ring and mesh: two
subnets per cable (one per rail), both ends of the cable in them, and nodes listed in cable
order (DOMAIN.md §2).
"""

from __future__ import annotations

from collections import Counter
from ipaddress import IPv4Network

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.filefacts import RuleProblem
from pytest_sparkfabric.cluster.model import Cluster, Rail
from pytest_sparkfabric.cluster.source import Path_


def _rail_path(cluster: Cluster, index: int, rail: Rail) -> Path_:
    return ("nodes", index, "ports", rail.port, rail.index)


def check_subnets(cluster: Cluster) -> list[RuleProblem]:
    """Subnet problems of a cluster whose node counts and ports are right."""
    if cluster.topology in ("direct", "switch"):
        return _check_shared_subnets(cluster)
    order = _cable_order(cluster)
    if order is not None:
        names = [cluster.nodes[i].name for i in order]
        wrong = next(i for i, j in enumerate(order) if i != j)
        prev = cluster.nodes[order[wrong - 1]]
        listed = cluster.nodes[(order[wrong - 1] + 1) % len(order)]
        return [
            RuleProblem(
                ("nodes",),
                f"are not listed in cable order: by their addresses, port 0 of {prev.name} is "
                f"cabled to port 1 of {names[wrong]}, not of {listed.name}",
                f"list the nodes as {', '.join(names)} (port 0 of each to port 1 of the next)",
            )
        ]
    problems = []
    n = len(cluster.nodes)
    first_use: dict[IPv4Network, tuple[int, int]] = {}
    for i in range(n):
        j = (i + 1) % n
        a, b = cluster.nodes[i], cluster.nodes[j]
        for r in range(hardware.RAILS_PER_PORT):
            ra, rb = a.rail(0, r), b.rail(1, r)
            if ra.address.network != rb.address.network:
                problems.append(
                    RuleProblem(
                        _rail_path(cluster, j, rb),
                        f"{rb.address} is not in {ra.address.network}, the subnet of the other "
                        f"end of its cable, {ra.id} ({ra.address})",
                        "both ends of a cable's rail need addresses in one subnet; nodes are "
                        "cabled port 0 to port 1 of the next node listed",
                    )
                )
                continue
            net = ra.address.network
            cable, other = first_use.setdefault(net, (i, r))
            touches = {i, j} & {cable, (cable + 1) % n}
            if cable != i and (not touches or cluster.spec.arp_sysctls):
                c = cluster.nodes[cable]
                problems.append(
                    RuleProblem(
                        _rail_path(cluster, i, ra),
                        f"{ra.address} is in {net}, already the subnet of rail {other} of cable "
                        f"{c.name}:p0<->{cluster.nodes[(cable + 1) % n].name}:p1",
                        "every cable's rail needs its own subnet (2 per cable)",
                    )
                )
    return problems


def _check_shared_subnets(cluster: Cluster) -> list[RuleProblem]:
    problems = []
    for r in range(hardware.RAILS_PER_PORT):
        rails = [(i, n.rail(n.ports[0], r)) for i, n in enumerate(cluster.nodes)]
        counts = Counter(rail.address.network for _, rail in rails)
        common = max(counts, key=lambda net: counts[net])  # ties: the first node's subnet
        first = next(rail for _, rail in rails if rail.address.network == common)
        for i, rail in rails:
            if rail.address.network != common:
                problems.append(
                    RuleProblem(
                        _rail_path(cluster, i, rail),
                        f"{rail.address} is not in {common}, the rail {r} subnet of "
                        f"{first.node} ({first.address})",
                        f"every node needs one address in each rail's subnet: rail {r} in {common}",
                    )
                )
    return problems


def _cable_order(cluster: Cluster) -> list[int] | None:
    """The node order the addresses describe, when it is a full cycle unlike the listed one."""
    nodes = cluster.nodes
    n = len(nodes)
    nxt: dict[int, int] = {}
    for i, a in enumerate(nodes):
        peers = [
            j
            for j, b in enumerate(nodes)
            if j != i
            and all(
                a.rail(0, r).address.network == b.rail(1, r).address.network
                for r in range(hardware.RAILS_PER_PORT)
            )
        ]
        if len(peers) != 1:
            return None
        nxt[i] = peers[0]
    order = [0]
    while len(order) < n:
        order.append(nxt[order[-1]])
    if len(set(order)) != n or nxt[order[-1]] != 0 or order == list(range(n)):
        return None
    return order
