"""What the rules need to know of a cluster file, read from a valid or a broken one.

The rules that need only names, counts and addresses run on `Facts`, read either from a valid
Cluster or, tolerantly, from the raw data of a file that failed shape validation: one broken
value never hides a duplicate address elsewhere. Every rule says what it found as a
`RuleProblem`; `load.py` adds the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Interface
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.cluster.model import Cluster
from pytest_sparkfabric.cluster.plan import NODE_COUNTS
from pytest_sparkfabric.cluster.source import Path_
from pytest_sparkfabric.cluster.spec import TRANSPORTS


@dataclass(frozen=True)
class RuleProblem:
    """What one rule found: where in the file (its path), what, and the fix."""

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
        transport if transport in TRANSPORTS else None,
        _lax(_BOOL, data.get("arp_sysctls", False)) is True,
        [_raw_node(i, n) for i, n in enumerate(raw_nodes)] if isinstance(raw_nodes, list) else None,
        data.get("switch") is not None,
        bool(data.get("replay_dir")),
        [k for k in limits if isinstance(k, str)] if isinstance(limits, Mapping) else [],
    )
