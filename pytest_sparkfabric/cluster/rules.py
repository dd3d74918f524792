"""The cabling, address, switch and reference rules of a cluster file (pure; DOMAIN.md §2).

`check_data` runs the rules that need no valid shape on the raw data of a file that failed
validation (`filefacts.py`); `check` runs every rule on a shape-valid Cluster, the subnet plan
(`subnets.py`) only when the cabling is sound enough to lay it over.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any

from pytest_sparkfabric.cluster.faults import FAULTS, TARGETS
from pytest_sparkfabric.cluster.filefacts import (
    Facts,
    NodeFact,
    RailFact,
    RuleProblem,
    facts_of,
    facts_of_data,
)
from pytest_sparkfabric.cluster.model import Cluster
from pytest_sparkfabric.cluster.plan import NODE_COUNTS, PORTS_PER_NODE
from pytest_sparkfabric.cluster.source import Path_, format_path
from pytest_sparkfabric.cluster.spec import FaultSpec
from pytest_sparkfabric.cluster.subnets import check_subnets
from pytest_sparkfabric.cluster.thresholds import NAMES as THRESHOLD_NAMES


def check_data(data: Any) -> list[RuleProblem]:
    """The rules that need no valid shape, on the raw data of a file that failed validation."""
    if not isinstance(data, Mapping):
        return []
    return _check_facts(facts_of_data(data))[0]


def check(cluster: Cluster) -> list[RuleProblem]:
    """Every cabling, addressing and cross-reference problem of a shape-valid cluster."""
    problems, cabling_ok = _check_facts(facts_of(cluster))
    problems += _check_switch(cluster)
    if cabling_ok:
        problems += check_subnets(cluster)
    problems += _check_refs(cluster)
    return problems


def _count_fix(topo: str, n: int) -> str:
    for name, (lo, hi) in NODE_COUNTS.items():
        if lo <= n <= hi and name != topo:
            other = " or 'switch'" if name == "ring" and n <= NODE_COUNTS["switch"][1] else ""
            return f"use topology {name!r}{other}, or list {_need(topo)} nodes"
    return f"list {_need(topo)} nodes"


def _why_count(topo: str) -> str:
    return "one switch leg per node" if topo == "switch" else "a Spark has 2 ports"


def _need(topo: str) -> str:
    lo, hi = NODE_COUNTS[topo]
    if topo == "ring":
        return f"{lo} or more"
    return f"exactly {lo}" if lo == hi else f"{lo} to {hi}"


def _check_facts(f: Facts) -> tuple[list[RuleProblem], bool]:
    """Problems, and whether the cabling is sound enough to lay the subnet plan over it."""
    problems: list[RuleProblem] = []
    cabling: list[RuleProblem] = []
    topo = f.topology
    nodes = f.nodes or []
    if topo is not None and f.nodes is not None:
        lo, hi = NODE_COUNTS[topo]
        if not lo <= len(nodes) <= hi:
            cabling.append(
                RuleProblem(
                    ("topology",),
                    f"{topo!r} needs {_need(topo)} nodes ({_why_count(topo)}); got {len(nodes)}",
                    _count_fix(topo, len(nodes)),
                )
            )
    names: dict[str, int] = {}
    hosts: dict[tuple[str, int | None], int] = {}
    for n in nodes:
        if n.name is not None:
            if n.name in names:
                problems.append(
                    RuleProblem(
                        ("nodes", n.index, "name"),
                        f"{n.name!r} is already the name of nodes[{names[n.name]}]",
                        "give every node its own name",
                    )
                )
            names.setdefault(n.name, n.index)
        if n.host is not None:
            if n.host in hosts:
                problems.append(
                    RuleProblem(
                        ("nodes", n.index, "ssh", "host"),
                        f"{n.host[0]} is already the ssh host of nodes[{hosts[n.host]}]",
                        "every node needs its own management address",
                    )
                )
            hosts.setdefault(n.host, n.index)
        if n.has_ssh is False and f.transport == "ssh":
            problems.append(
                RuleProblem(
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
            RuleProblem(
                ("transport",),
                "'replay' needs replay_dir: the folder of a recording",
                "add replay_dir: <folder>, or use transport ssh or sim",
            )
        )
    if topo == "switch" and not f.has_switch:
        problems.append(
            RuleProblem(
                ("topology",),
                "'switch' needs a switch: section that names each node's switch port",
                "add switch: {host: ..., user: ..., password_env: SWITCH_PASSWORD, "
                "ports: {<node>: qsfp56-dd-1-1, ...}}",
            )
        )
    if topo is not None and topo != "switch" and f.has_switch:
        problems.append(
            RuleProblem(
                ("switch",),
                f"is only for topology 'switch'; this file says {topo!r}",
                "remove the switch: section, or set topology: switch",
            )
        )
    problems += _check_addresses(f)
    problems += _check_thresholds(f.thresholds)
    ok = topo is not None and f.nodes is not None and not cabling
    return cabling + problems, ok


def _port_count(topo: str, n: NodeFact) -> list[RuleProblem]:
    assert n.ports is not None
    want = PORTS_PER_NODE[topo]
    if len(n.ports) == want:
        return []
    listed = " and ".join(str(p) for p in n.ports) or "no port"
    if want == 2:
        return [
            RuleProblem(
                ("nodes", n.index, "ports"),
                f"lists {('port ' + listed) if n.ports else listed}; "
                f"a {topo} node is cabled on both ports 0 and 1",
                "list both ports, each with its two rail addresses",
            )
        ]
    return [
        RuleProblem(
            ("nodes", n.index, "ports"),
            f"lists {'ports ' + listed if n.ports else listed}; a {topo} node has one cabled port",
            "list only the cabled port (the same port number on every node)"
            if n.ports
            else "add the cabled port: 1: [rail 0 address, rail 1 address]",
        )
    ]


def _same_port(topo: str, nodes: list[NodeFact]) -> list[RuleProblem]:
    single = [(n, n.ports[0]) for n in nodes if n.ports is not None and len(n.ports) == 1]
    counts = Counter(p for _, p in single)
    if len(counts) < 2:
        return []
    common = max(counts, key=lambda p: counts[p])  # ties: the first node's port
    users = [n for n, p in single if p == common]
    others = f"nodes[{users[0].index}] uses" if len(users) == 1 else "the other nodes use"
    return [
        RuleProblem(
            ("nodes", n.index, "ports"),
            f"uses port {port}; {others} port {common}",
            f"a {topo} cluster uses the same port number on every node: cable port {common} "
            "(or move the others)",
        )
        for n, port in single
        if port != common
    ]


def _check_addresses(f: Facts) -> list[RuleProblem]:
    problems = []
    owner: dict[object, RailFact] = {}
    nodes = f.nodes or []
    for n in nodes:
        for rail in n.rails:
            ip = rail.address.ip
            if ip in owner:
                problems.append(
                    RuleProblem(
                        rail.path,
                        f"{rail.address} is already used by {format_path(owner[ip].path)}",
                        "every rail interface needs its own address",
                    )
                )
            owner.setdefault(ip, rail)
            net = rail.address.network
            if net.prefixlen > 30 or ip in (net.network_address, net.broadcast_address):
                problems.append(
                    RuleProblem(
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
            RuleProblem(
                y.path,
                f"{y.address} is in {x.address.network} like {format_path(x.path)} "
                f"({x.address}){also}: two interfaces of one node in one subnet cause ARP "
                "flux and rp_filter drops",
                "one subnet per rail; or set arp_ignore=1, arp_announce=2 and rp_filter=2 on "
                "every node and say arp_sysctls: true",
            )
        )
    return problems


def _check_switch(cluster: Cluster) -> list[RuleProblem]:
    sw = cluster.spec.switch
    if sw is None or cluster.topology != "switch":
        return []
    problems = []
    if sw.api in ("rest", "auto") and sw.api_port == 80 and not sw.allow_http:
        problems.append(
            RuleProblem(
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
                RuleProblem(
                    ("switch", "ports", name),
                    f"is not a node of this file{_close(name, names)}",
                    f"name one of: {', '.join(names)}",
                )
            )
    for name in names:
        if name not in sw.ports:
            problems.append(
                RuleProblem(
                    ("switch", "ports"),
                    f"has no switch port for node {name!r}",
                    f"add `{name}: <switch interface>` (e.g. qsfp56-dd-1-1)",
                )
            )
    seen: dict[str, str] = {}
    for name, port in sw.ports.items():
        if port in seen:
            problems.append(
                RuleProblem(
                    ("switch", "ports", name),
                    f"{port} is already the switch port of {seen[port]}",
                    "each node has its own switch port (breakout leg)",
                )
            )
        seen.setdefault(port, name)
    return problems


def _close(word: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_thresholds(names: list[str]) -> list[RuleProblem]:
    known = sorted(THRESHOLD_NAMES)
    return [
        RuleProblem(
            ("thresholds", key),
            f"is not a known threshold{_close(key, known)}",
            f"known thresholds: {', '.join(known)}",
        )
        for key in names
        if key not in known
    ]


def _check_refs(cluster: Cluster) -> list[RuleProblem]:
    problems = []
    names = [n.name for n in cluster.nodes]
    launch = cluster.spec.nccl.launch_node
    if launch is not None and launch not in names:
        problems.append(
            RuleProblem(
                ("nccl", "launch_node"),
                f"{launch!r} is not a node of this file{_close(launch, names)}",
                f"name one of: {', '.join(names)}",
            )
        )
    faults = cluster.spec.simulate.faults if cluster.spec.simulate is not None else ()
    for i, f in enumerate(faults):
        for path, message, fix in _fault_problems(f, cluster):
            problems.append(RuleProblem(("simulate", "faults", i, *path), message, fix))
    return problems


def _fault_problems(f: FaultSpec, cluster: Cluster) -> Iterator[tuple[Path_, str, str]]:
    """The targets of one fault against the registry's (`faults.py`) and this file."""
    fault = FAULTS[f.fault]
    names = [n.name for n in cluster.nodes]
    sw = cluster.spec.switch
    given = {k for k in TARGETS if getattr(f, k) is not None}
    missing = [k for k in fault.required if k not in given]
    if missing:
        keys = " and ".join(repr(k) for k in missing)
        yield ("fault",), f"{f.fault!r} needs {keys}", fault.usage()
    for k in sorted(given - set(fault.required) - set(fault.allowed)):
        yield (k,), f"is not used by fault {f.fault!r}", fault.usage()
    if fault.needs_switch and cluster.topology != "switch":
        yield (
            ("fault",),
            f"{f.fault!r} needs topology 'switch'; this file says {cluster.topology!r}",
            "remove this fault",
        )
    if f.node is not None and f.node not in names:
        yield (
            ("node",),
            f"{f.node!r} is not a node of this file",
            f"name one of: {', '.join(names)}",
        )
    elif f.node is not None and f.port is not None and f.port not in cluster.node(f.node).ports:
        yield ("port",), f"{f.port} is not a cabled port of {f.node}", "name a cabled port"
    if f.switch_port is not None and (sw is None or f.switch_port not in sw.ports.values()):
        known = ", ".join(sorted(sw.ports.values())) if sw else "none (no switch: section)"
        yield (
            ("switch_port",),
            f"{f.switch_port!r} is not a switch port of this file",
            f"switch ports: {known}",
        )
    if f.fault == "mtu" and f.node is None and f.switch_port is None:
        yield ("fault",), "'mtu' needs a node (and rail) or a switch_port", fault.usage()
