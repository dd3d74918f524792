"""Cabling rules, links and the subnet plan of each topology (pure; DOMAIN.md §2).

The rules that need only names, counts and addresses run on `Facts`, which are read either from a
valid Cluster or, tolerantly, from the raw data of a file that failed shape validation
(`check_data`): one broken value never hides a duplicate address elsewhere. The rules that need the
whole plan (subnets per cable, switch ports, references) run on a valid Cluster (`check`).
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv4Network
from itertools import combinations
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from pytest_sparkfabric.cluster import hardware

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.config import Cluster, Rail
    from pytest_sparkfabric.cluster.source import Path_

NODE_COUNTS = {"direct": (2, 2), "mesh": (3, 3), "ring": (4, 64), "switch": (2, 8)}
PORTS_PER_NODE = {"direct": 1, "mesh": 2, "ring": 2, "switch": 1}


@dataclass(frozen=True, slots=True)
class Cable:
    """A QSFP cable between two node ports, or a node port and a switch port."""

    a_node: str
    a_port: int
    b_node: str | None
    b_port: int | str | None

    @property
    def id(self) -> str:
        b = f"{self.b_node}:p{self.b_port}" if self.b_node else f"switch:{self.b_port}"
        return f"{self.a_node}:p{self.a_port}<->{b}"


@dataclass(frozen=True, slots=True)
class Link:
    """Two rail interfaces that must reach each other (one subnet)."""

    a: Rail
    b: Rail
    rail: int

    @property
    def subnet(self) -> IPv4Network:
        return self.a.address.network

    @property
    def id(self) -> str:
        return f"{self.a.id}<->{self.b.id}"

    def nodes(self) -> tuple[str, str]:
        return (self.a.node, self.b.node)


@dataclass(frozen=True, slots=True)
class DirectedLink:
    src: Rail
    dst: Rail

    @property
    def id(self) -> str:
        return f"{self.src.id}->{self.dst.id}"


@dataclass(frozen=True, slots=True)
class NodePair:
    a: str
    b: str
    links: tuple[Link, ...]

    @property
    def id(self) -> str:
        return f"{self.a}<->{self.b}"


@dataclass(frozen=True)
class Plan:
    topology: str
    cables: tuple[Cable, ...]
    links: tuple[Link, ...]
    subnets: tuple[IPv4Network, ...]

    @property
    def directed(self) -> tuple[DirectedLink, ...]:
        out = []
        for link in self.links:
            out.append(DirectedLink(link.a, link.b))
            out.append(DirectedLink(link.b, link.a))
        return tuple(out)

    @property
    def pairs(self) -> tuple[NodePair, ...]:
        grouped: dict[tuple[str, str], list[Link]] = defaultdict(list)
        for link in self.links:
            grouped[link.nodes()].append(link)
        return tuple(NodePair(a, b, tuple(ls)) for (a, b), ls in grouped.items())


def cables(cluster: Cluster) -> tuple[Cable, ...]:
    nodes = cluster.nodes
    topo = cluster.topology
    if topo == "direct" and len(nodes) == 2 and nodes[0].ports:
        port = nodes[0].ports[0]
        return (Cable(nodes[0].name, port, nodes[1].name, port),)
    if topo in ("ring", "mesh"):
        n = len(nodes)
        return tuple(Cable(nodes[i].name, 0, nodes[(i + 1) % n].name, 1) for i in range(n))
    if topo == "switch":
        sw = cluster.spec.switch
        return tuple(
            Cable(n.name, n.ports[0], None, sw.ports.get(n.name) if sw else None)
            for n in nodes
            if n.ports
        )
    return ()


def plan(cluster: Cluster) -> Plan:
    """Links and subnets of a cluster that passed `check` (stable order)."""
    nodes = cluster.nodes
    links: list[Link] = []
    if cluster.topology in ("direct", "switch"):
        for r in range(hardware.RAILS_PER_PORT):
            for x, y in combinations(nodes, 2):
                links.append(Link(x.rail(x.ports[0], r), y.rail(y.ports[0], r), r))
    else:
        n = len(nodes)
        for i in range(n):
            a, b = nodes[i], nodes[(i + 1) % n]
            for r in range(hardware.RAILS_PER_PORT):
                links.append(Link(a.rail(0, r), b.rail(1, r), r))
    subnets: list[IPv4Network] = []
    for link in links:
        if link.subnet not in subnets:
            subnets.append(link.subnet)
    return Plan(cluster.topology, cables(cluster), tuple(links), tuple(subnets))


ITEM_KINDS: dict[str, str] = {
    "node": "per node",
    "rail": "per rail netdev",
    "roce_device": "per RoCE device",
    "link": "per link (two rails in one subnet)",
    "directed_link": "per directed link",
    "node_pair": "per node pair",
    "switch": "per switch",
}


def item_counts(cluster: Cluster) -> dict[str, int]:
    """How many test items one test function of each parametrisation kind collects."""
    p = plan(cluster)
    rails = cluster.rails
    return {
        "node": len(cluster.nodes),
        "rail": len(rails),
        "roce_device": len(rails),
        "link": len(p.links),
        "directed_link": len(p.directed),
        "node_pair": len(p.pairs),
        "switch": 1 if cluster.spec.switch is not None else 0,
    }


# -- rules ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopoProblem:
    path: Path_
    message: str
    fix: str


@dataclass(frozen=True)
class RailFact:
    path: Path_
    node: int
    port: int
    index: int
    address: IPv4Interface
    netdev: str


@dataclass
class NodeFact:
    index: int
    name: str | None = None
    host: tuple[str, int | None] | None = None
    has_ssh: bool | None = None  # None: unknown (not a mapping)
    ports: tuple[int, ...] | None = None  # None: not readable
    rails: list[RailFact] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name or f"nodes[{self.index}]"


@dataclass
class Facts:
    """What the rules need to know of a file, read from a valid or a broken one."""

    topology: str | None
    transport: str | None
    arp_sysctls: bool
    nodes: list[NodeFact] | None
    has_switch: bool
    replay_dir: bool
    thresholds: list[str] = field(default_factory=list)


def facts_of(cluster: Cluster) -> Facts:
    spec = cluster.spec
    nodes = []
    for i, (n, built) in enumerate(zip(spec.nodes, cluster.nodes, strict=True)):
        ssh = n.ssh
        rails = [
            RailFact(
                ("nodes", i, "ports", r.port, r.index), i, r.port, r.index, r.address, r.netdev
            )
            for r in built.rails
        ]
        nodes.append(
            NodeFact(
                i,
                n.name,
                (ssh.host, ssh.port) if ssh else None,
                ssh is not None,
                tuple(sorted(n.ports)),
                rails,
            )
        )
    return Facts(
        spec.topology,
        spec.transport,
        spec.arp_sysctls,
        nodes,
        spec.switch is not None,
        bool(spec.replay_dir),
        list(spec.thresholds),
    )


_BOOL: TypeAdapter[bool] = TypeAdapter(bool)
_INT: TypeAdapter[int] = TypeAdapter(int)


def _lax(adapter: TypeAdapter[Any], value: Any) -> Any:
    """A raw value read as pydantic reads it (`"yes"` is true, `"22"` is 22), else None."""
    try:
        return adapter.validate_python(value)
    except ValidationError:
        return None


def _port_number(key: Any) -> int | None:
    if isinstance(key, int) and not isinstance(key, bool) and key in hardware.PORTS:
        return key
    if isinstance(key, str) and key in ("0", "1"):
        return int(key)
    return None


def _raw_node(i: int, item: Any) -> NodeFact:
    fact = NodeFact(i)
    if not isinstance(item, Mapping):
        return fact
    name = item.get("name")
    fact.name = name if isinstance(name, str) and name else None
    ssh = item.get("ssh")
    fact.has_ssh = ssh is not None
    if isinstance(ssh, Mapping) and isinstance(ssh.get("host"), str):
        fact.host = (ssh["host"], _lax(_INT, ssh.get("port")))
    ports = item.get("ports")
    if not isinstance(ports, Mapping):
        return fact
    numbers = [_port_number(k) for k in ports]
    fact.ports = None if None in numbers else tuple(sorted(n for n in numbers if n is not None))
    for key, value in ports.items():
        port = _port_number(key)
        if port is None or not isinstance(value, list):
            continue
        for index, entry in enumerate(value[: hardware.RAILS_PER_PORT]):
            text = entry.get("address") if isinstance(entry, Mapping) else entry
            netdev = entry.get("netdev") if isinstance(entry, Mapping) else None
            if not isinstance(text, str) or "/" not in text:
                continue
            try:
                address = IPv4Interface(text)
            except ValueError:
                continue
            if not isinstance(netdev, str):
                netdev = hardware.rail_names(port, index).netdev
            fact.rails.append(
                RailFact(("nodes", i, "ports", key, index), i, port, index, address, netdev)
            )
    return fact


def facts_of_data(data: Mapping[Any, Any]) -> Facts:
    """Facts of a file whose shape may be broken: anything unreadable is left out."""
    topo = data.get("topology")
    transport = data.get("transport", "ssh")
    raw_nodes = data.get("nodes")
    limits = data.get("thresholds")
    return Facts(
        topo if isinstance(topo, str) and topo in NODE_COUNTS else None,
        transport if transport in ("ssh", "sim", "replay") else None,
        _lax(_BOOL, data.get("arp_sysctls", False)) is True,
        [_raw_node(i, n) for i, n in enumerate(raw_nodes)] if isinstance(raw_nodes, list) else None,
        data.get("switch") is not None,
        bool(data.get("replay_dir")),
        [k for k in limits if isinstance(k, str)] if isinstance(limits, Mapping) else [],
    )


def check_data(data: Any) -> list[TopoProblem]:
    """The rules that need no valid shape, on the raw data of a file that failed validation."""
    if not isinstance(data, Mapping):
        return []
    return _check_facts(facts_of_data(data))[0]


def check(cluster: Cluster) -> list[TopoProblem]:
    """Every cabling, addressing and cross-reference problem of a shape-valid cluster."""
    problems, cabling_ok = _check_facts(facts_of(cluster))
    problems += _check_switch(cluster)
    if cabling_ok:
        problems += _check_subnets(cluster)
    problems += _check_refs(cluster)
    return problems


def _count_fix(topo: str, n: int) -> str:
    for name, (lo, hi) in NODE_COUNTS.items():
        if lo <= n <= hi and name != topo:
            other = " or 'switch'" if name == "ring" and n <= NODE_COUNTS["switch"][1] else ""
            return f"use topology {name!r}{other}, or list {_need(topo)} nodes"
    return f"list {_need(topo)} nodes"


def _need(topo: str) -> str:
    lo, hi = NODE_COUNTS[topo]
    return f"exactly {lo}" if lo == hi else f"{lo} to {hi}"


def _check_facts(f: Facts) -> tuple[list[TopoProblem], bool]:
    """Problems, and whether the cabling is sound enough to lay the subnet plan over it."""
    problems: list[TopoProblem] = []
    cabling: list[TopoProblem] = []
    topo = f.topology
    nodes = f.nodes or []
    if topo is not None and f.nodes is not None:
        lo, hi = NODE_COUNTS[topo]
        if not lo <= len(nodes) <= hi:
            cabling.append(
                TopoProblem(
                    ("topology",),
                    f"{topo!r} needs {_need(topo)} nodes (a Spark has 2 ports); got {len(nodes)}",
                    _count_fix(topo, len(nodes)),
                )
            )
    names: dict[str, int] = {}
    hosts: dict[tuple[str, int | None], int] = {}
    for n in nodes:
        if n.name is not None:
            if n.name in names:
                problems.append(
                    TopoProblem(
                        ("nodes", n.index, "name"),
                        f"{n.name!r} is already the name of nodes[{names[n.name]}]",
                        "give every node its own name",
                    )
                )
            names.setdefault(n.name, n.index)
        if n.host is not None:
            if n.host in hosts:
                problems.append(
                    TopoProblem(
                        ("nodes", n.index, "ssh", "host"),
                        f"{n.host[0]} is already the ssh host of nodes[{hosts[n.host]}]",
                        "every node needs its own management address",
                    )
                )
            hosts.setdefault(n.host, n.index)
        if n.has_ssh is False and f.transport == "ssh":
            problems.append(
                TopoProblem(
                    ("nodes", n.index),
                    f"({n.label}) has no ssh: and transport is 'ssh'",
                    "add ssh: {host: <management address>, user: <user>}, or use transport: sim",
                )
            )
        if topo is not None and n.ports is not None:
            cabling += _port_count(topo, n)
    if topo in ("direct", "switch"):
        cabling += _same_port(topo, nodes)
    if f.transport == "replay" and not f.replay_dir:
        problems.append(
            TopoProblem(
                ("transport",),
                "'replay' needs replay_dir: the folder of a recording",
                "add replay_dir: <folder>, or use transport ssh or sim",
            )
        )
    if topo == "switch" and not f.has_switch:
        problems.append(
            TopoProblem(
                ("topology",),
                "'switch' needs a switch: section that names each node's switch port",
                "add switch: {host: ..., user: ..., password_env: SWITCH_PASSWORD, "
                "ports: {<node>: qsfp56-dd-1-1, ...}}",
            )
        )
    if topo is not None and topo != "switch" and f.has_switch:
        problems.append(
            TopoProblem(
                ("switch",),
                f"is only for topology 'switch'; this file says {topo!r}",
                "remove the switch: section, or set topology: switch",
            )
        )
    problems += _check_addresses(f)
    problems += _check_thresholds(f.thresholds)
    ok = topo is not None and f.nodes is not None and not cabling
    return cabling + problems, ok


def _port_count(topo: str, n: NodeFact) -> list[TopoProblem]:
    assert n.ports is not None
    want = PORTS_PER_NODE[topo]
    if len(n.ports) == want:
        return []
    listed = " and ".join(str(p) for p in n.ports) or "no port"
    if want == 2:
        return [
            TopoProblem(
                ("nodes", n.index, "ports"),
                f"lists {('port ' + listed) if n.ports else listed}; "
                f"a {topo} node is cabled on both ports 0 and 1",
                "list both ports, each with its two rail addresses",
            )
        ]
    return [
        TopoProblem(
            ("nodes", n.index, "ports"),
            f"lists {'ports ' + listed if n.ports else listed}; a {topo} node has one cabled port",
            "list only the cabled port (the same port number on every node)"
            if n.ports
            else "add the cabled port: 1: [rail 0 address, rail 1 address]",
        )
    ]


def _same_port(topo: str, nodes: list[NodeFact]) -> list[TopoProblem]:
    single = [(n, n.ports[0]) for n in nodes if n.ports is not None and len(n.ports) == 1]
    counts = Counter(p for _, p in single)
    if len(counts) < 2:
        return []
    common = max(counts, key=lambda p: counts[p])  # ties: the first node's port
    users = [n for n, p in single if p == common]
    others = f"nodes[{users[0].index}] uses" if len(users) == 1 else "the other nodes use"
    return [
        TopoProblem(
            ("nodes", n.index, "ports"),
            f"uses port {port}; {others} port {common}",
            f"a {topo} cluster uses the same port number on every node: cable port {common} "
            "(or move the others)",
        )
        for n, port in single
        if port != common
    ]


def _where(path: Path_) -> str:
    from pytest_sparkfabric.cluster.source import format_path

    return format_path(path)


def _check_addresses(f: Facts) -> list[TopoProblem]:
    problems = []
    owner: dict[object, RailFact] = {}
    nodes = f.nodes or []
    for n in nodes:
        for rail in n.rails:
            ip = rail.address.ip
            if ip in owner:
                problems.append(
                    TopoProblem(
                        rail.path,
                        f"{rail.address} is already used by {_where(owner[ip].path)}",
                        "every rail interface needs its own address",
                    )
                )
            owner.setdefault(ip, rail)
            net = rail.address.network
            if net.prefixlen > 30 or ip in (net.network_address, net.broadcast_address):
                problems.append(
                    TopoProblem(
                        rail.path,
                        f"{rail.address} is not a usable host address of its subnet",
                        "use a host address inside a subnet of /30 or wider, e.g. "
                        "192.168.100.11/24",
                    )
                )
    if f.arp_sysctls:
        return problems
    # Two interfaces of one node in one subnet: ARP flux. Told once per pair of interfaces.
    shared: dict[tuple[int, int, int, int], list[tuple[NodeFact, RailFact, RailFact]]] = {}
    for n in nodes:
        for x, y in combinations(n.rails, 2):
            if x.address.network.overlaps(y.address.network):
                shared.setdefault((x.port, x.index, y.port, y.index), []).append((n, x, y))
    for group in shared.values():
        n, x, y = group[0]
        also = f" (so do {', '.join(m.label for m, _, _ in group[1:])})" if group[1:] else ""
        problems.append(
            TopoProblem(
                y.path,
                f"{y.address} is in {x.address.network} like {_where(x.path)} "
                f"({x.address}){also}: two interfaces of one node in one subnet cause ARP "
                "flux and rp_filter drops",
                "one subnet per rail; or set arp_ignore=1, arp_announce=2 and rp_filter=2 on "
                "every node and say arp_sysctls: true",
            )
        )
    return problems


def _rail_path(cluster: Cluster, index: int, rail: Rail) -> Path_:
    return ("nodes", index, "ports", rail.port, rail.index)


def _check_subnets(cluster: Cluster) -> list[TopoProblem]:
    if cluster.topology in ("direct", "switch"):
        return _check_shared_subnets(cluster)
    order = _cable_order(cluster)
    if order is not None:
        names = [cluster.nodes[i].name for i in order]
        wrong = next(i for i, j in enumerate(order) if i != j)
        prev = cluster.nodes[order[wrong - 1]]
        listed = cluster.nodes[(order[wrong - 1] + 1) % len(order)]
        return [
            TopoProblem(
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
                    TopoProblem(
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
                    TopoProblem(
                        _rail_path(cluster, i, ra),
                        f"{ra.address} is in {net}, already the subnet of rail {other} of cable "
                        f"{c.name}:p0<->{cluster.nodes[(cable + 1) % n].name}:p1",
                        "every cable's rail needs its own subnet (2 per cable)",
                    )
                )
    return problems


def _check_shared_subnets(cluster: Cluster) -> list[TopoProblem]:
    problems = []
    for r in range(hardware.RAILS_PER_PORT):
        rails = [(i, n.rail(n.ports[0], r)) for i, n in enumerate(cluster.nodes)]
        counts = Counter(rail.address.network for _, rail in rails)
        common = max(counts, key=lambda net: counts[net])  # ties: the first node's subnet
        first = next(rail for _, rail in rails if rail.address.network == common)
        for i, rail in rails:
            if rail.address.network != common:
                problems.append(
                    TopoProblem(
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


def _check_switch(cluster: Cluster) -> list[TopoProblem]:
    sw = cluster.spec.switch
    if sw is None or cluster.topology != "switch":
        return []
    problems = []
    if sw.api == "rest" and sw.api_port == 80 and not sw.allow_http:
        problems.append(
            TopoProblem(
                ("switch", "api_port"),
                "80 is plain HTTP: the switch password would cross the network unencrypted",
                "use HTTPS (the www-ssl service: drop api_port, or name its port), or set "
                "allow_http: true on a management network you trust",
            )
        )
    names = [n.name for n in cluster.nodes]
    for name in sw.ports:
        if name not in names:
            problems.append(
                TopoProblem(
                    ("switch", "ports", name),
                    f"is not a node of this file{_close(name, names)}",
                    f"name one of: {', '.join(names)}",
                )
            )
    for name in names:
        if name not in sw.ports:
            problems.append(
                TopoProblem(
                    ("switch", "ports"),
                    f"has no switch port for node {name!r}",
                    f"add `{name}: <switch interface>` (e.g. qsfp56-dd-1-1)",
                )
            )
    seen: dict[str, str] = {}
    for name, port in sw.ports.items():
        if port in seen:
            problems.append(
                TopoProblem(
                    ("switch", "ports", name),
                    f"{port} is already the switch port of {seen[port]}",
                    "each node has its own switch port (breakout leg)",
                )
            )
        seen.setdefault(port, name)
    return problems


def _close(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_thresholds(names: list[str]) -> list[TopoProblem]:
    from pytest_sparkfabric.cluster.thresholds import KNOWN

    return [
        TopoProblem(
            ("thresholds", key),
            f"is not a known threshold{_close(key, sorted(KNOWN))}",
            f"known thresholds: {', '.join(sorted(KNOWN))}",
        )
        for key in names
        if key not in KNOWN
    ]


def _check_refs(cluster: Cluster) -> list[TopoProblem]:
    from pytest_sparkfabric.cluster.faults import check_faults

    problems = []
    names = [n.name for n in cluster.nodes]
    launch = cluster.spec.nccl.launch_node
    if launch is not None and launch not in names:
        problems.append(
            TopoProblem(
                ("nccl", "launch_node"),
                f"{launch!r} is not a node of this file{_close(launch, names)}",
                f"name one of: {', '.join(names)}",
            )
        )
    if cluster.spec.simulate is not None:
        for i, p in check_faults(cluster):
            problems.append(TopoProblem(("simulate", "faults", i, *p.path), p.message, p.fix))
    return problems
