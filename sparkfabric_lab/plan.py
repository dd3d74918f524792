"""What a lab is made of, derived from a cluster (pure): namespaces, veth cables, bridges,
addresses, sysctls, and how each fault in `simulate.faults` is applied for real.

Cables: direct, ring and mesh join the two nodes' netdevs port to port, one veth pair per rail.
A switch is a namespace with one Linux bridge (`bridge1`, as on the real switch: one offloaded
bridge) and one leg per node rail; both rails share its L2 network while each keeps its own
subnet, so ARP flux is as real as on the switch and the nodes need the ARP sysctls. Every
node also gets a management veth (`enP7s7`, the Spark's 10GbE name) on a host bridge;
the host side holds the first address of the management subnet.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from ipaddress import IPv4Interface, IPv4Network
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Rail
    from pytest_sparkfabric.cluster.faults import FaultName

# Tools only the hardware has; in the lab each is a wrapper around the simulator.
SIM_TOOLS = (
    "ethtool",
    "ib_write_bw",
    "ib_write_lat",
    "ib_read_bw",
    "ib_send_bw",
    "ibdev2netdev",
    "ibv_devinfo",
    "show_gids",
    "mlnx_qos",
    "mpirun",
    "all_reduce_perf",
    "all_gather_perf",
    "nvidia-smi",
    "gpu_burn",
    "lldpctl",
)
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LAB_RANGE = IPv4Network("198.18.0.0/15")
SWITCH_LEG_MTU = 9216
SWITCH_BRIDGE = "bridge1"
# Faults only the lab expresses (a hung tool is a wrapper of its own); the simulator behind the
# wrappers hears of all others, so its tools (ethtool, ib_write_bw, mpirun, ...) agree with
# what the kernel shows: node_unreachable included, which the lab makes real by starting no
# sshd and the simulated mpirun by failing to reach that node (lab.faultplan).
LAB_ONLY_FAULTS: frozenset[FaultName] = frozenset({"command_hangs"})
_PREFIX = re.compile(r"^[a-z][a-z0-9]{0,4}-?$")


@dataclass(frozen=True, slots=True)
class End:
    """One end of a veth pair: its namespace (None: the host), name and settings."""

    ns: str | None
    name: str
    mtu: int = 1500
    up: bool = True
    master: str | None = None
    addresses: tuple[IPv4Interface, ...] = ()


@dataclass(frozen=True, slots=True)
class Wire:
    """A veth pair: a cable rail, a switch leg, or a management link."""

    a: End
    b: End
    what: str


@dataclass(frozen=True, slots=True)
class Bridge:
    ns: str | None
    name: str
    mtu: int | None = None
    addresses: tuple[IPv4Interface, ...] = ()


@dataclass(frozen=True, slots=True)
class Hang:
    """A tool that never returns on a node (fault command_hangs); `args`: a leading-args match."""

    tool: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class NodeLab:
    name: str
    ns: str
    mgmt: IPv4Interface
    host_if: str
    rails: tuple[Rail, ...]
    sshd: bool
    sysctls: tuple[tuple[str, str], ...]
    nccl_conf: str
    hangs: tuple[Hang, ...]
    # tool_missing: tools that get no wrapper (the node's shell does not find them)
    missing: frozenset[str]
    # node_lost: the tool whose first run ends every process of the node, sshd included
    lost_on: str | None
    carrier: Mapping[str, bool]
    pcie_width: Mapping[str, int]
    addresses: Mapping[str, tuple[IPv4Interface, ...]]


@dataclass(frozen=True)
class LabPlan:
    prefix: str
    mgmt_net: IPv4Network
    host_bridge: Bridge
    namespaces: tuple[str, ...]
    bridges: tuple[Bridge, ...]
    wires: tuple[Wire, ...]
    nodes: tuple[NodeLab, ...]
    switch_ns: str | None
    switch_mgmt: IPv4Interface | None
    applied: tuple[str, ...] = field(default=())
    sim_faults: tuple[int, ...] = field(default=())

    def node(self, name: str) -> NodeLab:
        return next(n for n in self.nodes if n.name == name)

    @property
    def host_links(self) -> tuple[str, ...]:
        """Every link the lab makes in the host's namespace (the bridge first)."""
        ends = [w.a.name for w in self.wires if w.a.ns is None]
        return (self.host_bridge.name, *ends)


def mgmt_address(net: IPv4Network, host: int) -> IPv4Interface:
    return IPv4Interface(f"{net.network_address + host}/{net.prefixlen}")


def ns_name(prefix: str, node: str) -> str:
    return f"{prefix}{node}"


def check_lab(cluster: Cluster, prefix: str, mgmt: IPv4Network) -> list[str]:
    """Why this cluster cannot be built as a lab with these settings (empty: it can)."""
    problems: list[str] = []
    if not _PREFIX.match(prefix):
        problems.append(
            f"prefix {prefix!r}: use 1-5 lowercase letters or digits, optionally ending in '-' "
            "(host-side interface names must stay within 15 characters)"
        )
    if not mgmt.subnet_of(LAB_RANGE):
        problems.append(
            f"management subnet {mgmt} is outside {LAB_RANGE}: the lab only uses the "
            "benchmarking range (RFC 2544)"
        )
    elif mgmt.prefixlen > 27:
        problems.append(f"management subnet {mgmt} is too small: use a /24 (at most /27)")
    for rail in cluster.rails:
        if rail.address.ip not in LAB_RANGE:
            problems.append(
                f"{rail.id} {rail.address} is outside {LAB_RANGE}: the lab only uses the "
                "benchmarking range; renumber the fabric (see examples/lab/)"
            )
        elif rail.address.network.overlaps(mgmt):
            problems.append(
                f"{rail.id} {rail.address} overlaps the management subnet {mgmt}: "
                "choose another --mgmt"
            )
    reserved = {"switch", "unplugged"}
    for node in cluster.nodes:
        if node.name in reserved:
            problems.append(f"node name {node.name!r} is used by the lab itself; rename it")
    return problems


class PlanBuilder:
    """The plan while it is made; `lab.faultplan` applies faults to it, `lab.assemble` makes
    the finished LabPlan."""

    def __init__(self, cluster: Cluster, prefix: str, mgmt: IPv4Network) -> None:
        from pytest_sparkfabric.cluster.plan import plan

        self.cluster = cluster
        self.prefix = prefix
        self.mgmt = mgmt
        self.topo = plan(cluster)
        self.switch_ns = f"{prefix}switch" if cluster.topology == "switch" else None
        self.limbo_ns = f"{prefix}unplugged"
        self.wires: list[Wire] = []
        # (node, netdev) -> (wire index, 'a' or 'b')
        self.rail_wire: dict[tuple[str, str], tuple[int, str]] = {}
        self.carrier: dict[tuple[str, str], bool] = {}
        self.width: dict[tuple[str, str], int] = {}
        self.sysctls: dict[str, dict[str, str]] = {}
        self.conf: dict[str, list[str]] = {n.name: [] for n in cluster.nodes}
        self.hangs: dict[str, list[Hang]] = {n.name: [] for n in cluster.nodes}
        self.no_sshd: set[str] = set()
        self.missing: dict[str, set[str]] = {n.name: set() for n in cluster.nodes}
        self.lost_on: dict[str, str] = {}
        self.applied: list[str] = []
        self.limbo_used = 0

    def ns(self, node: str) -> str:
        return ns_name(self.prefix, node)

    def rail_end(self, rail: Rail) -> End:
        return End(self.ns(rail.node), rail.netdev, self.cluster.mtu, True, None, (rail.address,))

    def cable(self) -> None:
        if self.switch_ns is None:
            for link in self.topo.links:
                self._add_rail_wire(
                    Wire(self.rail_end(link.a), self.rail_end(link.b), f"{link.id}"),
                    link.a,
                    link.b,
                )
            return
        sw = self.cluster.spec.switch
        for i, node in enumerate(self.cluster.nodes):
            swport = sw.ports.get(node.name, "?") if sw else "?"
            for rail in node.rails:
                leg = End(self.switch_ns, f"p{i + 1}r{rail.index}", SWITCH_LEG_MTU, True,
                          SWITCH_BRIDGE)  # fmt: skip
                self._add_rail_wire(
                    Wire(
                        self.rail_end(rail), leg, f"{rail.id}<->switch:{swport} rail {rail.index}"
                    ),
                    rail,
                    None,
                )

    def _add_rail_wire(self, wire: Wire, a: Rail, b: Rail | None) -> None:
        self.wires.append(wire)
        self.rail_wire[(a.node, a.netdev)] = (len(self.wires) - 1, "a")
        if b is not None:
            self.rail_wire[(b.node, b.netdev)] = (len(self.wires) - 1, "b")

    def end_of(self, rail: Rail) -> End:
        i, side = self.rail_wire[(rail.node, rail.netdev)]
        return self.wires[i].a if side == "a" else self.wires[i].b

    def set_end(self, rail: Rail, end: End) -> None:
        i, side = self.rail_wire[(rail.node, rail.netdev)]
        w = self.wires[i]
        self.wires[i] = replace(w, a=end) if side == "a" else replace(w, b=end)

    def far_end(self, rail: Rail) -> tuple[int, str]:
        i, side = self.rail_wire[(rail.node, rail.netdev)]
        return i, "b" if side == "a" else "a"

    def base_sysctls(self) -> None:
        # "As the file says": arp_sysctls: true, or a switch, where both rails of a node share
        # one L2 network (the suite expects arp_ignore=1, arp_announce=2 there).
        arp = self.cluster.spec.arp_sysctls or self.cluster.topology == "switch"
        for node in self.cluster.nodes:
            s: dict[str, str] = {
                # rp_filter: the kernel takes max(all, interface); `all` stays 0 so one rail can
                # be made strict (fault rp_filter_strict) while the others stay loose.
                "net/ipv4/conf/all/rp_filter": "0",
                "net/ipv4/conf/all/arp_ignore": "1" if arp else "0",
                "net/ipv4/conf/all/arp_announce": "2" if arp else "0",
            }
            for rail in node.rails:
                s[f"net/ipv6/conf/{rail.netdev}/disable_ipv6"] = "1"
                s[f"net/ipv4/conf/{rail.netdev}/rp_filter"] = "2"
                s[f"net/ipv4/conf/{rail.netdev}/arp_ignore"] = "1" if arp else "0"
                s[f"net/ipv4/conf/{rail.netdev}/arp_announce"] = "2" if arp else "0"
            self.sysctls[node.name] = s
