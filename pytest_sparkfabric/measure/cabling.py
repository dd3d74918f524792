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
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.lldp import LldpNeighbors, build_lldpctl, parse_lldpctl
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
    """Every node port (cabled in the plan or lit) by (node, port); `lldp` per node; the
    physical mistakes that take the cabling as found back to the plan."""

    ports: Mapping[tuple[str, int], PortPeer]
    lldp: Mapping[str, Measured[LldpNeighbors]]
    mistakes: tuple[Mistake, ...] = ()


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
    n = cluster.node(node)
    names = []
    for rail in range(hardware.RAILS_PER_PORT):
        mine = next((r for r in n.rails if r.port == port and r.index == rail), None)
        names.append(mine.netdev if mine else hardware.rail_names(port, rail).netdev)
    return tuple(names)


def _macs(fabric: Fabric) -> dict[str, End]:
    """Every fabric netdev's MAC (lower case) -> its node port, from `ip -j addr`."""
    out: dict[str, End] = {}
    for n in fabric.cluster.nodes:
        node = facts.node(fabric, n.name).value
        if node is None:
            continue
        for port in hardware.PORTS:
            for name in _netdevs(fabric.cluster, n.name, port):
                iface = node.interfaces.get(name)
                if iface is not None and iface.mac:
                    out[iface.mac.lower()] = End(n.name, port)
    return out


def _by_name(fabric: Fabric, system: str | None, netdev: str | None) -> End | None:
    """The far end by LLDP system name and port description (when no MAC matched)."""
    if not system or not netdev:
        return None
    for n in fabric.cluster.nodes:
        if system.split(".")[0] != n.name:
            continue
        for port in hardware.PORTS:
            if netdev in _netdevs(fabric.cluster, n.name, port):
                return End(n.name, port)
    return None


def measure(fabric: Fabric) -> Cabling:
    cluster = fabric.cluster
    names = [n.name for n in cluster.nodes]
    results = fabric.run_all([Job(n, build_lldpctl(), QUICK_S) for n in names])
    lldp = {n: parsed(r, "lldpctl", parse_lldpctl) for n, r in zip(names, results, strict=True)}
    macs = _macs(fabric)
    wires = planned(cluster)
    plan = {e: w.far(e) for w in wires for e in (w.a, w.b)}
    ports: dict[tuple[str, int], PortPeer] = {}
    for n in names:
        node = facts.node(fabric, n).value
        for port in hardware.PORTS:
            end = End(n, port)
            devs = _netdevs(cluster, n, port)
            lit = node is not None and any(
                (i := node.interfaces.get(d)) is not None and i.carrier for d in devs
            )
            seen, how = None, ""
            heard = lldp[n]
            if heard.value is None:
                how = f"not identified: {heard.error}"
            else:
                for dev in devs:
                    for nb in heard.value.on(dev):
                        far = macs.get(nb.neighbor_mac or "") or _by_name(
                            fabric, nb.system_name, nb.port_description or nb.port_name
                        )
                        if far is not None and far.node != n:
                            seen, how = far, f"LLDP on {dev}"
                            break
                    if seen is not None:
                        break
                else:
                    how = (
                        f"not identified: lldpd hears no fabric neighbour on {', '.join(devs)}"
                        if lit
                        else f"not identified: no link on {', '.join(devs)}"
                    )
            if end in plan or lit or seen is not None:
                ports[(n, port)] = PortPeer(end, plan.get(end), seen, lit, how)
    # A node whose interfaces were not read: its planned cables are taken as planned (its own
    # item says not measured), not as missing.
    unread = {e for e in plan if e.node and facts.node(fabric, e.node).value is None}
    carrier = {p.end for p in ports.values() if p.carrier} | unread
    found = found_wires(wires, {p.end: p.seen for p in ports.values()}, carrier)
    return Cabling(ports, lldp, solve(wires, found))


def cabling(fabric: Fabric) -> Cabling:
    """Every node port's far end against the plan (one `lldpctl` per node, all at once)."""
    return fabric.phase(NAME, measure)
