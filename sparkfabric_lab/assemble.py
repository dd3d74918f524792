"""A cluster's whole lab plan: the cabling, base sysctls and faults of `lab.plan` put together
with the management network and, for a switch, the switch namespace (pure)."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import hardware
from sparkfabric_lab import LabError
from sparkfabric_lab.faultplan import apply_fault
from sparkfabric_lab.plan import (
    LAB_ONLY_FAULTS,
    SWITCH_BRIDGE,
    Bridge,
    End,
    LabPlan,
    NodeLab,
    PlanBuilder,
    Wire,
    check_lab,
    mgmt_address,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster


def build_plan(cluster: Cluster, *, prefix: str, mgmt: IPv4Network) -> LabPlan:
    """The lab for `cluster`; raises LabError listing every reason it cannot be built."""
    problems = check_lab(cluster, prefix, mgmt)
    if problems:
        raise LabError("cannot build this lab:\n" + "\n".join(f"  {p}" for p in problems))
    b = PlanBuilder(cluster, prefix, mgmt)
    b.cable()
    b.base_sysctls()
    sim_faults: list[int] = []
    faults = cluster.spec.simulate.faults if cluster.spec.simulate else ()
    for i, f in enumerate(faults):
        b.applied.append(apply_fault(b, f))
        if f.fault not in LAB_ONLY_FAULTS:
            sim_faults.append(i)
    host_bridge = Bridge(None, f"{prefix}mgmt", None, (mgmt_address(mgmt, 1),))
    wires = list(b.wires)
    nodes: list[NodeLab] = []
    for i, node in enumerate(cluster.nodes):
        ns = b.ns(node.name)
        host_if = f"{prefix}m{i}"
        addr = mgmt_address(mgmt, 11 + i)
        wires.append(
            Wire(
                End(None, host_if, 1500, True, host_bridge.name),
                End(ns, hardware.MGMT_NETDEV, 1500, True, None, (addr,)),
                f"{node.name} management",
            )
        )
        ends = {
            e.name: e
            for w in b.wires
            for e in (w.a, w.b)
            if e.ns == ns
        }  # fmt: skip
        conf = [f"# /etc/nccl.conf of lab node {node.name} (sparkfabric lab)", *b.conf[node.name]]
        nodes.append(
            NodeLab(
                name=node.name,
                ns=ns,
                mgmt=addr,
                host_if=host_if,
                rails=node.rails,
                sshd=node.name not in b.no_sshd,
                sysctls=tuple(b.sysctls[node.name].items()),
                nccl_conf="\n".join(conf) + "\n",
                hangs=tuple(b.hangs[node.name]),
                missing=frozenset(b.missing[node.name]),
                lost_on=b.lost_on.get(node.name),
                carrier={r.netdev: b.carrier.get((r.node, r.netdev), True) for r in node.rails},
                pcie_width={
                    r.pci: b.width.get((r.node, r.pci), hardware.PCIE_WIDTH) for r in node.rails
                },
                addresses={r.netdev: ends[r.netdev].addresses for r in node.rails},
            )
        )
    namespaces = [n.ns for n in nodes]
    bridges: list[Bridge] = []
    switch_mgmt = None
    if b.switch_ns is not None:
        namespaces.append(b.switch_ns)
        bridges = [Bridge(b.switch_ns, SWITCH_BRIDGE, None)]
        switch_mgmt = mgmt_address(mgmt, 2)
        wires.append(
            Wire(
                End(None, f"{prefix}msw", 1500, True, host_bridge.name),
                End(b.switch_ns, "ether1", 1500, True, None, (switch_mgmt,)),
                "switch management",
            )
        )
    if any(b.limbo_ns in (w.a.ns, w.b.ns) for w in wires):
        namespaces.append(b.limbo_ns)
    return LabPlan(
        prefix=prefix,
        mgmt_net=mgmt,
        host_bridge=host_bridge,
        namespaces=tuple(namespaces),
        bridges=tuple(bridges),
        wires=tuple(wires),
        nodes=tuple(nodes),
        switch_ns=b.switch_ns,
        switch_mgmt=switch_mgmt,
        applied=tuple(b.applied),
        sim_faults=tuple(sim_faults),
    )
