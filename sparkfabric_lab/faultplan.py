"""How each fault in `simulate.faults` is made real in a lab plan (docs/lab.md, Faults). Pure
but for tool_missing, which looks on the host's PATH for a tool the nodes would share.

Kernel-level faults change the plan (an MTU, a cable, an address, a sysctl); lab-level ones
change what runs (no sshd, a tool that hangs, a tool not there, a node that dies); NCCL and
PCIe faults change a node's files. Every fault but command_hangs also goes to the simulator
behind the wrappers, so the simulated tools agree with the lab: a simulated mpirun on one node
cannot reach a node whose sshd is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster.faults import FAULTS
from sparkfabric_lab import LabError
from sparkfabric_lab.plan import SIM_TOOLS, SYSTEM_PATH, End, Hang, PlanBuilder, Wire

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.cluster.faults import FaultName
    from pytest_sparkfabric.cluster.spec import FaultSpec


def targets(b: PlanBuilder, f: FaultSpec) -> list[Rail]:
    nodes = [b.cluster.node(f.node)] if f.node else list(b.cluster.nodes)
    return [
        r
        for n in nodes
        for r in n.rails
        if (f.rail is None or r.index == f.rail) and (f.port is None or r.port == f.port)
    ]


Apply = Callable[[PlanBuilder, "FaultSpec", list["Rail"]], str]


def _ids(rails: list[Rail]) -> str:
    return ", ".join(r.id for r in rails)


def _who(b: PlanBuilder, f: FaultSpec) -> list[str]:
    return [f.node] if f.node else [n.name for n in b.cluster.nodes]


def _mtu(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    value = int(f.value or 0)
    if f.switch_port is None:
        for r in rails:
            b.set_end(r, replace(b.end_of(r), mtu=value))
        return f"mtu: {_ids(rails)} set to MTU {value}"
    sw = b.cluster.spec.switch
    owners = [n for n, p in (sw.ports.items() if sw else ()) if p == f.switch_port]
    for r in b.cluster.rails:
        if r.node in owners and (f.rail is None or r.index == f.rail):
            i, side = b.far_end(r)
            w = b.wires[i]
            if side == "a":
                b.wires[i] = replace(w, a=replace(w.a, mtu=value))
            else:
                b.wires[i] = replace(w, b=replace(w.b, mtu=value))
    return f"mtu: switch port {f.switch_port} legs set to MTU {value}"


def _duplicate_ip(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    done = []
    for r in rails:
        peer = _peer_rail(b, r)
        if peer is not None:
            b.set_end(r, replace(b.end_of(r), addresses=(peer.address,)))
            done.append(f"{r.id} carries {peer.address} of {peer.id}")
    return "duplicate_ip: " + ("; ".join(done) or "no peer rail found")


def _ipv6_enabled(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    for r in rails:
        b.sysctls[r.node][f"net/ipv6/conf/{r.netdev}/disable_ipv6"] = "0"
    return f"ipv6_enabled: disable_ipv6=0 on {_ids(rails)}"


def _arp_flux(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    s = b.sysctls[str(f.node)]
    for key in list(s):
        if key.endswith(("/arp_ignore", "/arp_announce")):
            s[key] = "0"
    return f"arp_flux: arp_ignore=0 arp_announce=0 on {f.node}"


def _rp_filter_strict(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    if f.rail is None and f.port is None:
        b.sysctls[str(f.node)]["net/ipv4/conf/all/rp_filter"] = "1"
        return f"rp_filter_strict: net.ipv4.conf.all.rp_filter=1 on {f.node}"
    for r in rails:
        b.sysctls[r.node][f"net/ipv4/conf/{r.netdev}/rp_filter"] = "1"
    return f"rp_filter_strict: rp_filter=1 on {_ids(rails)}"


def _node_unreachable(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    b.no_sshd.add(str(f.node))
    return f"node_unreachable: no sshd on {f.node} (ssh is refused)"


def _command_hangs(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    words = str(f.command).split()
    hang = Hang(words[0], tuple(words[1:])) if words else Hang("true", ())
    for n in _who(b, f):
        b.hangs[n].append(hang)
    return f"command_hangs: `{f.command}` never returns on {', '.join(_who(b, f))}"


def _tool_missing(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    tool = str(f.command).split()[0].rsplit("/", 1)[-1]
    own = shutil.which(tool, path=SYSTEM_PATH)
    who = ", ".join(_who(b, f))
    if tool in SIM_TOOLS and own is not None:
        # The nodes share the host's filesystem: without its wrapper the host's own would run.
        return f"tool_missing: `{tool}` is this host's own ({own}); simulated behind its wrapper"
    if own is not None:
        raise LabError(
            f"fault tool_missing: the lab cannot take `{tool}` away: every node shares this "
            f"host's {own}; name a tool the lab simulates ({', '.join(SIM_TOOLS)})"
        )
    for n in _who(b, f):
        b.missing[n].add(tool)
    return f"tool_missing: no `{tool}` on {who} (the node's shell does not find it)"


def _node_lost(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    tool = str(f.command).split()[0].rsplit("/", 1)[-1]
    b.lost_on[str(f.node)] = tool
    return f"node_lost: the first `{tool}` on {f.node} ends its every process, sshd included"


def _nccl_conf(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    for n in _who(b, f):
        node = b.cluster.node(n)
        lines = {
            "nccl_socket": "NCCL_NET=Socket",
            "nccl_single_hca": f"NCCL_IB_HCA={node.rails[0].rdma}",
            "nccl_gid_index": f"NCCL_IB_GID_INDEX={f.value if f.value is not None else 5}",
            "nccl_socket_ifname": "NCCL_SOCKET_IFNAME=eth0",
        }
        b.conf[n].append(lines.get(f.fault, lines["nccl_single_hca"]))
    return f"{f.fault}: /etc/nccl.conf of {', '.join(_who(b, f))} (and simulated)"


def _pcie_width(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    for r in rails:
        b.width[(r.node, r.pci)] = 2
    return f"pcie_width: sysfs current_link_width 2 for {_ids(rails)} (and simulated)"


def _link_down(b: PlanBuilder, f: FaultSpec, rails: list[Rail]) -> str:
    return _unplug(b, rails)


# What the lab does for each fault the registry (cluster/faults.py) marks lab="real"; the
# others are the simulator's alone. tests/cluster/test_faults.py holds the two in step.
APPLY: Mapping[FaultName, Apply] = {
    "mtu": _mtu,
    "link_down": _link_down,
    "duplicate_ip": _duplicate_ip,
    "ipv6_enabled": _ipv6_enabled,
    "arp_flux": _arp_flux,
    "rp_filter_strict": _rp_filter_strict,
    "node_unreachable": _node_unreachable,
    "command_hangs": _command_hangs,
    "nccl_socket": _nccl_conf,
    "nccl_single_hca": _nccl_conf,
    "nccl_gid_index": _nccl_conf,
    "nccl_socket_ifname": _nccl_conf,
    "pcie_width": _pcie_width,
    "tool_missing": _tool_missing,
    "node_lost": _node_lost,
}


def apply_fault(b: PlanBuilder, f: FaultSpec) -> str:
    """Apply one fault to the plan; the line that says how."""
    if FAULTS[f.fault].lab == "simulated":
        return f"{f.fault}: simulated (the node's hardware tools)"
    return APPLY[f.fault](b, f, targets(b, f))


def _peer_rail(b: PlanBuilder, rail: Rail) -> Rail | None:
    for link in b.topo.links:
        if link.a == rail:
            return link.b
        if link.b == rail:
            return link.a
    return None


def _unplug(b: PlanBuilder, rails: list[Rail]) -> str:
    """link_down: the cable carries no link; every netdev on it stays UP with NO-CARRIER."""
    done: list[str] = []
    for r in rails:
        i, far = b.far_end(r)
        w = b.wires[i]
        if b.switch_ns is not None:
            # The switch leg goes down: the node's netdev loses its carrier.
            if far == "a":
                b.wires[i] = replace(w, a=replace(w.a, up=False))
            else:
                b.wires[i] = replace(w, b=replace(w.b, up=False))
            b.carrier[(r.node, r.netdev)] = False
            done.append(r.id)
            continue
        if b.limbo_ns in (w.a.ns, w.b.ns):
            continue  # this cable is unplugged already
        # Each end keeps its netdev, paired with an admin-down stub: both lose carrier.
        on_cable = [k for k, v in b.rail_wire.items() if v[0] == i]
        stubs = []
        for end in (w.a, w.b):
            b.limbo_used += 1
            stub = End(b.limbo_ns, f"cable{b.limbo_used}", end.mtu, False)
            stubs.append(Wire(end, stub, f"{w.what} (unplugged)"))
        b.wires[i] = stubs[0]
        b.wires.append(stubs[1])
        for k in on_cable:
            if b.rail_wire[k][1] == "b":
                b.rail_wire[k] = (len(b.wires) - 1, "a")
            b.carrier[k] = False
        done.append(w.what)
    return f"link_down: no carrier on {', '.join(done) or 'nothing'}"
