"""The subnet plan of each topology, checked on a cluster whose cabling is sound.

direct and switch: one subnet per rail, each node one address in each. ring and mesh: two
subnets per cable (one per rail), both ends of the cable in them, and nodes listed in cable
order (DOMAIN.md §2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from ipaddress import IPv4Network

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.model import Cluster, Rail
from pytest_sparkfabric.cluster.source import Path_, Problem

_RAILS = range(hardware.RAILS_PER_PORT)


def rail_path(node: int, rail: Rail) -> Path_:
    return ("nodes", node, "ports", rail.port, rail.index)


def check_subnets(c: Cluster) -> Iterator[Problem]:
    """Subnet problems of a cluster whose node counts and ports are right."""
    nodes, n = c.nodes, len(c.nodes)
    if c.topology in ("direct", "switch"):
        for r in _RAILS:
            rails = [(i, node.rail(node.ports[0], r)) for i, node in enumerate(nodes)]
            counts = Counter(rail.address.network for _, rail in rails)
            common = max(counts, key=lambda net: counts[net])  # ties: the first node's subnet
            first = next(rail for _, rail in rails if rail.address.network == common)
            for i, rail in rails:
                if rail.address.network != common:
                    yield Problem(
                        rail_path(i, rail),
                        None,
                        f"{rail.address} is not in {common}, the rail {r} subnet of "
                        f"{first.node} ({first.address})",
                        f"every node needs one address in each rail's subnet: rail {r} in {common}",
                    )
        return
    order = _cable_order(c)
    if order is not None:
        wrong = next(i for i, j in enumerate(order) if i != j)
        prev, listed = nodes[order[wrong - 1]], nodes[(order[wrong - 1] + 1) % n]
        names = [nodes[i].name for i in order]
        yield Problem(
            ("nodes",),
            None,
            f"are not listed in cable order: by their addresses, port 0 of {prev.name} is cabled "
            f"to port 1 of {names[wrong]}, not of {listed.name}",
            f"list the nodes as {', '.join(names)} (port 0 of each to port 1 of the next)",
        )
        return
    first_use: dict[IPv4Network, tuple[int, int]] = {}
    for i in range(n):
        j = (i + 1) % n
        for r in _RAILS:
            ra, rb = nodes[i].rail(0, r), nodes[j].rail(1, r)
            net = ra.address.network
            if rb.address.network != net:
                yield Problem(
                    rail_path(j, rb),
                    None,
                    f"{rb.address} is not in {net}, the subnet of the other end of its cable, "
                    f"{ra.id} ({ra.address})",
                    "both ends of a cable's rail need addresses in one subnet; nodes are cabled "
                    "port 0 to port 1 of the next node listed",
                )
                continue
            cable, other = first_use.setdefault(net, (i, r))
            touches = {i, j} & {cable, (cable + 1) % n}
            if cable != i and (not touches or c.spec.arp_sysctls):
                yield Problem(
                    rail_path(i, ra),
                    None,
                    f"{ra.address} is in {net}, already the subnet of rail {other} of cable "
                    f"{nodes[cable].name}:p0<->{nodes[(cable + 1) % n].name}:p1",
                    "every cable's rail needs its own subnet (2 per cable)",
                )


def _cable_order(c: Cluster) -> list[int] | None:
    """The node order the addresses describe, when it is a full cycle unlike the listed one."""
    nodes, n = c.nodes, len(c.nodes)
    nxt: dict[int, int] = {}
    for i, a in enumerate(nodes):
        peers = [
            j
            for j, b in enumerate(nodes)
            if j != i
            and all(a.rail(0, r).address.network == b.rail(1, r).address.network for r in _RAILS)
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
