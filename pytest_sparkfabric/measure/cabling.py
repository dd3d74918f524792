"""Cabling: which box and port is at the far end of every cable, against cluster.yaml.

The far end comes from LLDP (`lldpctl`, lldpd on every node): a Linux peer advertises its
netdev's MAC as port ID (and the netdev name as port description), which is matched against
the MACs `ip -j addr` read from every node, so it names the far box and port whatever the
addressing says. A port cluster.yaml leaves empty that has carrier holds a cable too: the
cable is in the other port.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.measure import facts
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.lldp import LldpNeighbors, build_lldpctl, parse_lldpctl
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "cabling"


@dataclass(frozen=True, slots=True, order=True)
class End:
    """One end of a cable: a node port, or a switch port (`node` None, `leg` its name)."""

    node: str | None
    port: int | None = None
    leg: str | None = None

    @property
    def text(self) -> str:
        if self.node is None:
            return f"switch port {self.leg or '?'}"
        return f"{self.node} port {self.port}"


@dataclass(frozen=True, slots=True)
class PortPeer:
    """A node port: the far end cluster.yaml plans, the one LLDP names, and whether it is lit."""

    end: End
    planned: End | None
    seen: End | None
    carrier: bool
    how: str
    """Where `seen` came from (`LLDP on <netdev>`), or why it is unknown."""

    @property
    def wrong(self) -> bool:
        return self.seen is not None and self.seen != self.planned

    @property
    def cable(self) -> str:
        return f"{self.end.text} <-> {self.seen.text if self.seen else '?'}"


@dataclass(frozen=True, slots=True)
class Cabling:
    """Every node port (cabled in the plan or lit) by (node, port); `lldp` per node."""

    ports: Mapping[tuple[str, int], PortPeer]
    lldp: Mapping[str, Measured[LldpNeighbors]]


def planned_ends(cluster: Cluster) -> dict[End, End]:
    """Both directions of every cable of the plan: node port -> the far end."""
    from pytest_sparkfabric.cluster.plan import cables

    out: dict[End, End] = {}
    for c in cables(cluster):
        a = End(c.a_node, c.a_port)
        if c.b_node is not None:
            b = End(c.b_node, int(str(c.b_port)))
            out[b] = a
        else:
            b = End(None, None, str(c.b_port) if c.b_port is not None else None)
        out[a] = b
    return out


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
    plan = planned_ends(cluster)
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
    return Cabling(ports, lldp)


def cabling(fabric: Fabric) -> Cabling:
    """Every node port's far end against the plan (one `lldpctl` per node, all at once)."""
    return fabric.phase(NAME, measure)


def ring_order(fabric: Fabric) -> list[str] | None:
    """The node order the cables run in (port 0 to port 1 of the next), where every port's far
    end is known and they close one ring over every node; None otherwise."""
    cluster = fabric.cluster
    if cluster.topology not in ("ring", "mesh"):
        return None
    ports = cabling(fabric).ports
    order = [cluster.nodes[0].name]
    while len(order) <= len(cluster.nodes):
        peer = ports.get((order[-1], 0))
        if peer is None or peer.seen is None or peer.seen.port != 1 or peer.seen.node is None:
            return None
        if peer.seen.node == order[0]:
            break
        order.append(peer.seen.node)
    if sorted(order) != sorted(n.name for n in cluster.nodes):
        return None
    return order


def fix(fabric: Fabric, peer: PortPeer) -> str:
    """What to do about one port whose far end is not the planned one."""
    ports = cabling(fabric).ports
    node, port = peer.end.node, peer.end.port
    other = ports.get((str(node), 1 - int(port or 0)))
    if (
        other is not None
        and peer.seen is not None
        and other.seen is not None
        and peer.seen == other.planned
        and other.seen == peer.planned
    ):
        return f"exchange the two cables in {node} port 0 and port 1"
    order = ring_order(fabric)
    names = [n.name for n in fabric.cluster.nodes]
    if order is not None and order != names:
        return (
            f"move the cables to follow cluster.yaml's order ({', '.join(names)}), or list the "
            f"nodes in the cabled order ({', '.join(order)}) in cluster.yaml and re-address "
            "them (sparkfabric init writes that plan)"
        )
    planned = peer.planned.text if peer.planned else "no cable here"
    return (
        f"move the cable from {peer.end.text} so that it meets {planned}, or correct "
        "cluster.yaml (port numbers, node order) to match the cabling"
    )


def mismatch(fabric: Fabric, *ends: End) -> list[PortPeer]:
    """The miscabled ports among `ends` (node ports), for a check that failed over them."""
    ports = cabling(fabric).ports
    return [p for e in ends if (p := ports.get((str(e.node), int(e.port or 0)))) and p.wrong]
