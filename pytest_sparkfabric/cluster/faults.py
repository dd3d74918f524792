"""Which targets each simulated fault takes, and their validation (shared by sim and lab)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.config import Cluster, FaultSpec, SwitchSpec
    from pytest_sparkfabric.cluster.source import Path_

_TARGETS = ("node", "rail", "port", "lane", "switch_port", "value", "onset_c", "command")


@dataclass(frozen=True, slots=True)
class Rule:
    required: tuple[str, ...]
    allowed: tuple[str, ...]
    needs_switch: bool = False
    what: str = ""


RULES: dict[str, Rule] = {
    "link_down": Rule(("node",), ("port",), what="the cable on a node port has no link"),
    "autoneg_failed": Rule(
        ("switch_port",), (), True, "a breakout leg left on auto-negotiation stays down"
    ),
    "switch_cpu_forwarding": Rule(
        (), (), True, "an unused breakout sub-port in the bridge: the switch CPU forwards"
    ),
    "pfc_stall": Rule((), ("node",), True, "PFC/trust settings stall RoCE data"),
    "duplicate_ip": Rule(
        ("node", "rail"), ("port",), what="a rail carries the address of another node's rail"
    ),
    "half_port": Rule(("node",), ("port", "rail"), what="one PCIe half carries no traffic"),
    "nccl_single_hca": Rule((), ("node",), what="NCCL_IB_HCA names one RoCE device"),
    "nccl_socket": Rule((), ("node",), what="/etc/nccl.conf forces NCCL_NET=Socket"),
    "ipv6_enabled": Rule(("node",), ("rail", "port"), what="IPv6 is on for a fabric netdev"),
    "mtu": Rule(
        ("value",),
        ("node", "rail", "port", "switch_port"),
        what="an MTU below the cluster's on a node netdev or a switch port",
    ),
    "nic_throttled": Rule(("node",), (), what="the NIC runs at ~13 Gb/s, link says 200G"),
    "lane_degradation": Rule(
        ("node", "lane"),
        ("port", "onset_c"),
        what="one lane's error rate grows with NIC temperature under GPU load",
    ),
    "arp_flux": Rule(("node",), (), what="arp_ignore/arp_announce left at 0"),
    "rp_filter_strict": Rule(("node",), ("rail", "port"), what="rp_filter=1 (strict)"),
    "pcie_width": Rule(("node",), ("rail", "port"), what="a PCIe half trained at x2"),
    "eeprom_placeholder": Rule(("node",), ("port",), what="cable EEPROM reads 0 dB, 0 m"),
    "node_unreachable": Rule(("node",), (), what="the node does not answer ssh"),
    "command_hangs": Rule(("command",), ("node",), what="a tool never returns"),
}


@dataclass(frozen=True, slots=True)
class FaultProblem:
    path: Path_
    message: str
    fix: str


def check_faults(cluster: Cluster) -> Iterator[tuple[int, FaultProblem]]:
    """Problems of `simulate.faults`, each with its fault's index and a path inside the fault."""
    spec = cluster.spec.simulate
    if spec is None:
        return
    names = [n.name for n in cluster.nodes]
    sw = cluster.spec.switch
    for i, f in enumerate(spec.faults):
        for path, message, fix in _problems(f, cluster, names, sw):
            yield i, FaultProblem(path, message, fix)


def _problems(
    f: FaultSpec, cluster: Cluster, names: list[str], sw: SwitchSpec | None
) -> Iterator[tuple[Path_, str, str]]:
    rule = RULES[f.fault]
    given = {k for k in _TARGETS if getattr(f, k) is not None}
    missing = [k for k in rule.required if k not in given]
    if missing:
        keys = " and ".join(repr(k) for k in missing)
        yield ("fault",), f"{f.fault!r} needs {keys}", _usage(f.fault)
    for k in sorted(given - set(rule.required) - set(rule.allowed)):
        yield (k,), f"is not used by fault {f.fault!r}", _usage(f.fault)
    if rule.needs_switch and cluster.topology != "switch":
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
            (f"switch ports: {known}"),
        )
    if f.fault == "mtu" and f.node is None and f.switch_port is None:
        yield ("fault",), "'mtu' needs a node (and rail) or a switch_port", _usage("mtu")


def _usage(fault: str) -> str:
    rule = RULES[fault]
    req = ", ".join(f"{k}: ..." for k in rule.required)
    opt = f" (optional: {', '.join(rule.allowed)})" if rule.allowed else ""
    return f"write {{fault: {fault}{', ' + req if req else ''}}}{opt}"
