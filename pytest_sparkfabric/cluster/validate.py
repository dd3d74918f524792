"""The cabling, subnet, address, switch and reference rules of a cluster file (DOMAIN.md §2).

Each rule names the top-level fields it reads: on a file whose shape is broken elsewhere, the
rules whose fields all validated still run, so a bad `mtu` never hides a duplicate node name."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from ipaddress import IPv4Network
from itertools import combinations

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.faults import FAULTS, TARGETS
from pytest_sparkfabric.cluster.model import Cluster, Rail
from pytest_sparkfabric.cluster.plan import NODE_COUNTS, PORTS_PER_NODE
from pytest_sparkfabric.cluster.source import Path_, Problem, format_path

Rule = Callable[[Cluster], Iterable[Problem]]
RULES: list[tuple[frozenset[str], Rule]] = []
_RAILS = range(hardware.RAILS_PER_PORT)


def _rule(*fields: str) -> Callable[[Rule], Rule]:
    def add(fn: Rule) -> Rule:
        RULES.append((frozenset(fields), fn))
        return fn

    return add


def check(cluster: Cluster, valid: Collection[str] | None = None) -> list[Problem]:
    """The problems every rule finds whose fields are all in `valid` (None: every field)."""
    return [p for fields, fn in RULES if valid is None or fields <= set(valid) for p in fn(cluster)]


def _p(path: Path_, message: str, fix: str) -> Problem:
    return Problem(path, None, message, fix)


def _unknown(
    path: Path_, value: str, options: Sequence[str], what: str, among: str = "", empty: str = ""
) -> Problem:
    """`value` names no `what` of this file; the fix lists `options` (found in `among`)."""
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.6)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    shown = "" if path[-1] == value else f"{value!r} "
    fix = f"name one of{among}: {', '.join(options)}" if options else empty
    return _p(path, f"{shown}is not {what} of this file{guess}", fix or "name one")


def miscount(topo: str, n: int) -> tuple[str, str, list[str]] | None:
    """When `topo` cannot take `n` nodes: why, the count in words and the topologies that can."""
    lo, hi = NODE_COUNTS[topo]
    if lo <= n <= hi:
        return None
    need = f"{lo} or more" if topo == "ring" else f"exactly {lo}" if lo == hi else f"{lo} to {hi}"
    why = "one switch leg per node" if topo == "switch" else "a Spark has 2 ports"
    fits = [t for t, (a, b) in NODE_COUNTS.items() if a <= n <= b]
    return f"needs {need} nodes ({why})", need, fits


_PORTS_WORDS = {
    1: ("has one cabled port", "list only the cabled port (the same port number on every node)"),
    2: ("is cabled on both ports 0 and 1", "list both ports, each with its two rail addresses"),
}


@_rule("topology", "nodes")
def _cabling(c: Cluster) -> Iterator[Problem]:
    topo, nodes, ports = c.topology, c.nodes, PORTS_PER_NODE[c.topology]
    if wrong := miscount(topo, len(nodes)):
        what, need, fits = wrong
        use = f"use topology {' or '.join(map(repr, fits))}, or " if fits else ""
        yield _p(("topology",), f"{topo!r} {what}; got {len(nodes)}", f"{use}list {need} nodes")
    what, fix = _PORTS_WORDS[ports]
    for i, n in ((i, n) for i, n in enumerate(nodes) if len(n.ports) != ports):
        listed = f"port{'s' * (len(n.ports) > 1)} {' and '.join(map(str, n.ports))}"
        listed = listed if n.ports else "no port"
        yield _p(("nodes", i, "ports"), f"lists {listed}; a {topo} node {what}", fix)
    single = [(i, n.ports[0]) for i, n in enumerate(nodes) if len(n.ports) == 1 and ports == 1]
    counts = Counter(port for _, port in single)
    common = max(counts, key=lambda p: counts[p], default=None)  # ties: the first node's
    users = [i for i, port in single if port == common]
    others = f"nodes[{users[0]}] uses" if len(users) == 1 else "the other nodes use"
    fix = f"a {topo} cluster uses the same port number on every node: cable port {common}"
    for i, port in ((i, port) for i, port in single if port != common):
        what = f"uses port {port}; {others} port {common}"
        yield _p(("nodes", i, "ports"), what, fix + " (or move the others)")


def rail_path(node: int, rail: Rail) -> Path_:
    return ("nodes", node, "ports", rail.port, rail.index)


@_rule("topology", "nodes", "arp_sysctls")
def _subnets(c: Cluster) -> Iterator[Problem]:
    """The subnet plan (direct and switch: one subnet per rail, each node one address in each;
    ring and mesh: two per cable, one per rail, nodes in cable order), laid over the cabling:
    checked once the cabling is sound."""
    if any(True for _ in _cabling(c)):
        return
    nodes, n = c.nodes, len(c.nodes)
    if c.topology in ("direct", "switch"):
        for r in _RAILS:
            rails = [(i, node.rail(node.ports[0], r)) for i, node in enumerate(nodes)]
            counts = Counter(rail.address.network for _, rail in rails)
            common = max(counts, key=lambda net: counts[net])  # ties: the first node's subnet
            first = next(rail for _, rail in rails if rail.address.network == common)
            fix = f"every node needs one address in each rail's subnet: rail {r} in {common}"
            for i, rail in ((i, rail) for i, rail in rails if rail.address.network != common):
                what = f"the rail {r} subnet of {first.node} ({first.address})"
                yield _p(rail_path(i, rail), f"{rail.address} is not in {common}, {what}", fix)
        return
    if (order := _cable_order(c)) is not None:
        wrong = next(i for i, j in enumerate(order) if i != j)
        prev, listed = nodes[order[wrong - 1]], nodes[(order[wrong - 1] + 1) % n]
        names = [nodes[i].name for i in order]
        yield _p(
            ("nodes",),
            f"are not listed in cable order: by their addresses, port 0 of {prev.name} is cabled "
            f"to port 1 of {names[wrong]}, not of {listed.name}",
            f"list the nodes as {', '.join(names)} (port 0 of each to port 1 of the next)",
        )
        return
    first_use: dict[IPv4Network, tuple[int, int]] = {}
    for i, r in ((i, r) for i in range(n) for r in _RAILS):
        j = (i + 1) % n
        ra, rb = nodes[i].rail(0, r), nodes[j].rail(1, r)
        net = ra.address.network
        if rb.address.network != net:
            yield _p(
                rail_path(j, rb),
                f"{rb.address} is not in {net}, the subnet of the other end of its cable, "
                f"{ra.id} ({ra.address})",
                "both ends of a cable's rail need addresses in one subnet; nodes are cabled "
                "port 0 to port 1 of the next node listed",
            )
            continue
        cable, other = first_use.setdefault(net, (i, r))
        touches = {i, j} & {cable, (cable + 1) % n}
        if cable != i and (not touches or c.spec.arp_sysctls):
            yield _p(
                rail_path(i, ra),
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
    cycle = len(set(order)) == n and nxt[order[-1]] == 0
    return order if cycle and order != list(range(n)) else None


@_rule("nodes")
def _unique(c: Cluster) -> Iterator[Problem]:
    names: dict[str, int] = {}
    hosts: dict[tuple[str, int | None], int] = {}
    for i, n in enumerate(c.spec.nodes):
        if n.name in names:
            what = f"{n.name!r} is already the name of nodes[{names[n.name]}]"
            yield _p(("nodes", i, "name"), what, "give every node its own name")
        names.setdefault(n.name, i)
        if n.ssh and (host := (n.ssh.host, n.ssh.port)) in hosts:
            what = f"{host[0]} is already the ssh host of nodes[{hosts[host]}]"
            fix = "every node needs its own management address"
            yield _p(("nodes", i, "ssh", "host"), what, fix)
        elif n.ssh:
            hosts[host] = i
        for port in (p for p in n.link_speed if p not in n.ports):
            cabled = ", ".join(map(str, n.ports))
            what = f"names port {port}, which is not a cabled port of {n.name}"
            fix = f"give the speed of a port listed under ports ({cabled})"
            yield _p(("nodes", i, "link_speed", port), what, fix)


@_rule("nodes", "arp_sysctls")
def _addresses(c: Cluster) -> Iterator[Problem]:
    owner: dict[object, Path_] = {}
    # Two interfaces of one node in one subnet: ARP flux. Told once per pair of interfaces.
    shared: dict[tuple[int, ...], list[tuple[int, Rail, Rail]]] = {}
    for i, n in enumerate(c.nodes):
        for rail in n.rails:
            ip, net, path = rail.address.ip, rail.address.network, rail_path(i, rail)
            if ip in owner:
                what = f"{rail.address} is already used by {format_path(owner[ip])}"
                yield _p(path, what, "every rail interface needs its own address")
            owner.setdefault(ip, path)
            if net.prefixlen > 30 or ip in (net.network_address, net.broadcast_address):
                what = f"{rail.address} is not a usable host address of its subnet"
                fix = "use a host address inside a subnet of /30 or wider, e.g. 192.168.100.11/24"
                yield _p(path, what, fix)
        for x, y in combinations(n.rails, 2):
            if x.address.network.overlaps(y.address.network):
                shared.setdefault((x.port, x.index, y.port, y.index), []).append((i, x, y))
    for (i, x, y), *rest in shared.values() if not c.spec.arp_sysctls else ():
        also = f" (so do {', '.join(c.nodes[j].name for j, _, _ in rest)})" if rest else ""
        yield _p(
            rail_path(i, y),
            f"{y.address} is in {x.address.network} like {format_path(rail_path(i, x))} "
            f"({x.address}){also}: two interfaces of one node in one subnet cause ARP flux and "
            "rp_filter drops",
            "one subnet per rail; or set arp_ignore=1, arp_announce=2 and rp_filter=2 on every "
            "node and say arp_sysctls: true",
        )


@_rule("nodes", "transport", "replay_dir")
def _transport(c: Cluster) -> Iterator[Problem]:
    fix = "add ssh: {host: <management address>, user: <user>}, or use transport: sim"
    for i, n in enumerate(c.nodes if c.spec.transport == "ssh" else ()):
        if n.ssh is None:
            yield _p(("nodes", i), f"({n.name}) has no ssh: and transport is 'ssh'", fix)
    if c.spec.transport == "replay" and not c.spec.replay_dir:
        what = "'replay' needs replay_dir: the folder of a recording"
        yield _p(("transport",), what, "add replay_dir: <folder>, or use transport ssh or sim")


@_rule("topology", "nodes", "switch")
def _switch(c: Cluster) -> Iterator[Problem]:
    sw, switched = c.spec.switch, c.topology == "switch"
    if sw is not None and not switched:
        what = f"is only for topology 'switch'; this file says {c.topology!r}"
        yield _p(("switch",), what, "remove the switch: section, or set topology: switch")
    if sw is None and switched:
        what = "'switch' needs a switch: section that names each node's switch port"
        fix = "add switch: {host: ..., user: ..., password_env: SWITCH_PASSWORD, ports: "
        yield _p(("topology",), what, fix + "{<node>: qsfp56-dd-1-1, ...}}")
    if sw is None or not switched:
        return
    if sw.api in ("rest", "auto") and sw.api_port == 80 and not sw.allow_http:
        yield _p(
            ("switch", "api_port"),
            "80 is plain HTTP: the switch password would cross the network unencrypted",
            "use HTTPS (the www-ssl service: drop api_port, or name its port), or set "
            "allow_http: true on a management network you trust",
        )
    names = [n.name for n in c.nodes]
    of: dict[str, str] = {}
    for name, port in sw.ports.items():
        if name not in names:
            yield _unknown(("switch", "ports", name), name, names, "a node")
        if port in of:
            what = f"{port} is already the switch port of {of[port]}"
            fix = "each node has its own switch port (breakout leg)"
            yield _p(("switch", "ports", name), what, fix)
        of.setdefault(port, name)
    for name in (name for name in names if name not in sw.ports):
        what, fix = f"has no switch port for node {name!r}", f"add `{name}: <switch interface>`"
        yield _p(("switch", "ports"), what, fix + " (e.g. qsfp56-dd-1-1)")
    for leg in (leg for leg in sw.link_speed if leg not in of):
        empty = "list the switch's ports under switch.ports first"
        path = ("switch", "link_speed", leg)
        yield _unknown(path, leg, list(of), "a switch port", " switch.ports", empty)


@_rule("nodes", "nccl")
def _launch_node(c: Cluster) -> Iterator[Problem]:
    names, launch = [n.name for n in c.nodes], c.spec.nccl.launch_node
    if launch is not None and launch not in names:
        yield _unknown(("nccl", "launch_node"), launch, names, "a node")


@_rule("topology", "nodes", "switch", "simulate")
def _faults(c: Cluster) -> Iterator[Problem]:
    """The targets of each fault against the registry's (`faults.py`) and this file."""
    names = [n.name for n in c.nodes]
    legs = sorted(c.spec.switch.ports.values()) if c.spec.switch else []
    for i, f in enumerate(c.spec.simulate.faults if c.spec.simulate else ()):
        fault, at = FAULTS[f.fault], ("simulate", "faults", i)
        given = {k for k in TARGETS if getattr(f, k) is not None}
        if missing := [k for k in fault.required if k not in given]:
            keys = " and ".join(map(repr, missing))
            yield _p((*at, "fault"), f"{f.fault!r} needs {keys}", fault.usage())
        for k in sorted(given - {*fault.required, *fault.allowed}):
            yield _p((*at, k), f"is not used by fault {f.fault!r}", fault.usage())
        if fault.needs_switch and c.topology != "switch":
            what = f"{f.fault!r} needs topology 'switch'; this file says {c.topology!r}"
            yield _p((*at, "fault"), what, "remove this fault")
        if f.node is not None and f.node not in names:
            yield _unknown((*at, "node"), f.node, names, "a node")
        elif f.node is not None and f.port is not None and f.port not in c.node(f.node).ports:
            what = f"{f.port} is not a cabled port of {f.node}"
            yield _p((*at, "port"), what, "name a cabled port")
        if f.switch_port is not None and f.switch_port not in legs:
            empty = "remove switch_port: this file has no switch: section"
            yield _unknown((*at, "switch_port"), f.switch_port, legs, "a switch port", "", empty)
        if f.fault == "mtu" and f.node is None and f.switch_port is None:
            what = "'mtu' needs a node (and rail) or a switch_port"
            yield _p((*at, "fault"), what, fault.usage())
