"""Cabling: the far end of every cable from LLDP (the peer's MAC as port ID, matched against the
MACs `ip -j addr` read on every node, whatever the addressing says), against cluster.yaml. What
the far ends add up to (swapped, moved, missing cables) is `diagnosis.miscabling`'s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.diagnosis.miscabling import End, Mistake, Wire, found_wires, solve
from pytest_sparkfabric.measure import facts
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.probes.lldp import LldpNeighbor, build_lldpctl, parse_lldpctl
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "cabling"


@dataclass(frozen=True, slots=True)
class PortPeer:
    """A node port: the far end cluster.yaml plans, the one LLDP names, and whether it is lit."""

    end: End
    planned: End | None
    seen: End | None
    carrier: bool
    how: str
    """Where `seen` came from (`LLDP on <netdev>`), or why it is unknown."""


@dataclass(frozen=True, slots=True)
class Cabling:
    """Every node port (cabled in the plan or lit) by (node, port), and the physical mistakes
    that take the cabling as found back to the plan."""

    ports: Mapping[tuple[str, int], PortPeer]
    mistakes: tuple[Mistake, ...]


def planned(cluster: Cluster) -> tuple[Wire, ...]:
    """Every cable of the plan, as cluster.yaml lists its ends."""
    from pytest_sparkfabric.cluster.plan import cables

    return tuple(
        Wire(
            End(c.a_node, c.a_port),
            End(c.b_node, int(str(c.b_port))) if c.b_node else End(None, leg=str(c.b_port)),
        )
        for c in cables(cluster)
    )


def _netdevs(cluster: Cluster, node: str, port: int) -> tuple[str, ...]:
    """The port's netdevs: its rails', else the default names."""
    mine = {r.index: r.netdev for r in cluster.node(node).rails if r.port == port}
    rails = range(hardware.RAILS_PER_PORT)
    return tuple(mine.get(i) or hardware.rail_names(port, i).netdev for i in rails)


def _ends(fabric: Fabric) -> tuple[dict[str, End], dict[tuple[str, str], End]]:
    """Every fabric netdev's node port by its MAC (lower case, from `ip -j addr`) and by
    (node, netdev name), for a neighbour whose MAC matched none."""
    by_mac: dict[str, End] = {}
    by_name: dict[tuple[str, str], End] = {}
    for n in fabric.cluster.nodes:
        node = facts.node(fabric, n.name).value
        for port in hardware.PORTS:
            for name in _netdevs(fabric.cluster, n.name, port):
                by_name[(n.name, name)] = End(n.name, port)
                iface = node.interfaces.get(name) if node is not None else None
                if iface is not None and iface.mac:
                    by_mac[iface.mac.lower()] = End(n.name, port)
    return by_mac, by_name


def measure(fabric: Fabric) -> Cabling:
    cluster = fabric.cluster
    names = [n.name for n in cluster.nodes]
    results = fabric.run_all([Job(n, build_lldpctl(), QUICK_S) for n in names])
    lldp = {n: parsed(r, "lldpctl", parse_lldpctl) for n, r in zip(names, results, strict=True)}
    by_mac, by_name = _ends(fabric)
    wires = planned(cluster)
    plan = {e: w.far(e) for w in wires for e in (w.a, w.b)}
    ports: dict[tuple[str, int], PortPeer] = {}

    def far_end(nb: LldpNeighbor) -> End | None:
        system = (nb.system_name or "").split(".")[0]
        named = by_name.get((system, nb.port_description or nb.port_name or ""))
        return by_mac.get(nb.neighbor_mac or "") or named

    for n in names:
        node = facts.node(fabric, n).value
        for port in hardware.PORTS:
            end = End(n, port)
            devs = _netdevs(cluster, n, port)
            lit = node is not None and any(
                (i := node.interfaces.get(d)) is not None and i.carrier for d in devs
            )
            heard = lldp[n].value
            hits = (
                (far, f"LLDP on {dev}")
                for dev in devs
                for nb in (heard.on(dev) if heard is not None else ())
                if (far := far_end(nb)) is not None and far.node != n
            )
            seen, how = next(hits, (None, ""))
            why = "lldpd hears no fabric neighbour" if lit else "no link"
            if heard is None:
                how = f"not identified: {lldp[n].error}"
            elif seen is None:
                how = f"not identified: {why} on {', '.join(devs)}"
            if end in plan or lit or seen is not None:
                ports[(n, port)] = PortPeer(end, plan.get(end), seen, lit, how)
    # A node whose interfaces were not read: its planned cables are taken as planned (its own
    # item says not measured), not as missing.
    unread = {e for e in plan if e.node and facts.node(fabric, e.node).value is None}
    carrier = {p.end for p in ports.values() if p.carrier} | unread
    found = found_wires(wires, {p.end: p.seen for p in ports.values()}, carrier)
    return Cabling(ports, solve(wires, found))


def cabling(fabric: Fabric) -> Cabling:
    return fabric.phase(NAME, measure)
