"""The switch's configuration, read only (DOMAIN.md §7): each node's breakout leg up at its
declared speed (200G unless `link_speed` says 100G) with auto-negotiation off, FEC fec91 and
an MTU that carries the cluster's; one hardware-offloaded bridge holding the legs and no
unused sub-port; no PFC or egress caps the hosts do not share; the switch CPU load
recorded."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.cluster.hardware import LEG_LINK_MODES, l2mtu_need
from pytest_sparkfabric.measure import qos as qos_reads
from pytest_sparkfabric.measure import switch as switch_reads
from pytest_sparkfabric.measure import witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Cluster, Fabric, Node, Verdict
    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.measure.switch import SwitchState
    from pytest_sparkfabric.objects import Obj
    from pytest_sparkfabric.probes.routeros import BridgePort, EthernetPort

pytestmark = pytest.mark.switch

FEC = "fec91"
HOST_PFC = "disabled"
"""The switch's word for PFC off; the host's own PFC is read with mlnx_qos (measure/qos.py)."""
# The bridge and QoS settings are the switch's own: one cause for every path through it.
SWITCH_WIDE = (objects.SWITCH,)
_SUB = re.compile(r"^(?P<cage>.+)-(?P<lane>\d{1,2})$")


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "?"}[value]


def _cable(fabric: Fabric, node: Node) -> tuple[Obj, ...]:
    """The node's cable to its leg: what a fault of the leg blames."""
    return witness.cable(fabric, node.rails[0]) if node.rails else ()


def _state(fabric: Fabric) -> SwitchState:
    return switch_reads.state(fabric).get()


def _port(state: SwitchState, leg: str, where: str, verdict: Verdict) -> EthernetPort:
    ports = state.ethernet.get()
    port = ports.get(leg)
    if port is None:
        verdict.fail(
            f"{where}: the switch has no interface {leg} (cluster.yaml switch.ports); it has "
            f"{', '.join(sorted(ports)) or 'none'}",
            "link_down",
            measured="no such interface",
        )
    return port


def test_switch_leg(node: Node, switch: SwitchSpec, fabric: Fabric, verdict: Verdict) -> None:
    """The node's leg: running / link-ok at its declared rate (200Gbps by default),
    auto-negotiation off with the speed set by hand (200G-baseCR4; 100G-baseCR2 for a 4x100G
    breakout), FEC fec91."""
    leg = switch.ports[node.name]
    declared = min(r.link_speed_mbps for r in node.rails)
    rate_gbps, speed = declared / 1000, LEG_LINK_MODES[declared]
    expected = f"link-ok, {rate_gbps:g}Gbps, auto-negotiation off, {speed}, {FEC}"
    verdict(node=node.name, rail=f"switch {leg}", expected=expected)
    where = f"{node.name}: switch {switch.host} port {leg}"
    state = _state(fabric)
    port = _port(state, leg, where, verdict)
    mon = state.monitor[leg].get()
    rate = f"{mon.rate_gbps:g}Gbps" if mon.rate_gbps is not None else "no rate"
    autoneg = {True: "on", False: "off", None: "?"}[port.auto_negotiation]
    fec = mon.fec or mon.raw.get("fec-mode")
    measured = (
        f"{mon.status or '?'}, {rate}, auto-negotiation {autoneg}"
        f"{f' ({mon.auto_negotiation})' if mon.auto_negotiation else ''}, "
        f"speed {port.speed or '?'}, {fec or 'fec ?'}, running {_yes(port.running)}"
    )
    verdict(measured=measured)
    problem = f"{where}: {{what}}; seen: {measured}; expected: {expected}"
    cable = _cable(fabric, node)
    if port.auto_negotiation is not False or port.speed != speed:
        verdict.fail(
            problem.format(what=f"not forced to {speed} (auto-negotiation must be off)"),
            "autoneg_failed",
            objects=cable,
        )
    if not mon.link_ok or port.running is False:
        verdict.fail(problem.format(what="no link"), "link_down", objects=cable)
    if mon.rate_gbps != rate_gbps:
        verdict.fail(problem.format(what=f"rate {rate}"), "speed_degraded", objects=cable)
    if fec is not None and fec != FEC:
        verdict.fail(problem.format(what=f"FEC {fec}"), "fec_not_rs", objects=cable)


def test_switch_leg_mtu(
    node: Node, switch: SwitchSpec, cluster: Cluster, fabric: Fabric, verdict: Verdict
) -> None:
    """The leg's mtu carries the cluster MTU and its l2mtu the packet (L2MTU excludes the
    Ethernet header: l2mtu >= mtu on untagged legs, +4 per VLAN tag)."""
    leg = switch.ports[node.name]
    need_l2 = l2mtu_need(cluster.mtu)  # the fabric legs are untagged bridge ports
    expected = f"mtu >= {cluster.mtu}, l2mtu >= {need_l2}"
    verdict(node=node.name, rail=f"switch {leg}", expected=expected)
    where = f"{node.name}: switch {switch.host} port {leg}"
    port = _port(_state(fabric), leg, where, verdict)
    measured = f"mtu {port.mtu_bytes}, l2mtu {port.l2mtu_bytes}"
    verdict(measured=measured)
    if (port.mtu_bytes or 0) < cluster.mtu or (port.l2mtu_bytes or 0) < need_l2:
        verdict.fail(
            f"{where}: {measured}; expected {expected}", "mtu_path", objects=_cable(fabric, node)
        )


def _fabric_bridge(members: list[BridgePort]) -> str | None:
    bridges = Counter(p.bridge for p in members if p.bridge)
    return bridges.most_common(1)[0][0] if bridges else None


def test_switch_bridge_port(
    node: Node, switch: SwitchSpec, fabric: Fabric, verdict: Verdict
) -> None:
    """The node's leg is a port of the fabric bridge, and the switch chip offloads it."""
    leg = switch.ports[node.name]
    verdict(node=node.name, rail=f"switch {leg}", expected="in the fabric bridge, hw-offload yes")
    where = f"{node.name}: switch {switch.host} port {leg}"
    ports = _state(fabric).bridge_ports.get()
    legs = set(switch.ports.values())
    bridge = _fabric_bridge([p for p in ports if p.interface in legs])
    mine = [p for p in ports if p.interface == leg]
    if not mine:
        verdict.fail(
            f"{where}: not a port of any bridge; expected a port of {bridge or 'the bridge'}",
            "switch_cpu_forwarding",
            objects=SWITCH_WIDE,
            measured="not in a bridge",
        )
    port = mine[0]
    measured = (
        f"bridge {port.bridge}, hw-offload {_yes(port.hw_offload)}, hw {_yes(port.hw_requested)}"
    )
    verdict(measured=measured)
    if port.bridge != bridge:
        verdict.fail(
            f"{where}: in bridge {port.bridge}, the other legs in {bridge}: the chip offloads "
            "one bridge, the other forwards on the switch CPU; expected one bridge",
            "switch_cpu_forwarding",
            objects=SWITCH_WIDE,
        )
    if port.hw_offload is not True:
        verdict.fail(
            f"{where}: hw-offload {_yes(port.hw_offload)} (hw {_yes(port.hw_requested)}): "
            "the switch CPU forwards this port's traffic; expected hw-offload yes",
            "switch_cpu_forwarding",
            objects=SWITCH_WIDE,
        )


def test_switch_bridge(switch: SwitchSpec, fabric: Fabric, verdict: Verdict) -> None:
    """Exactly one bridge holds the fabric legs; each of its ports is hardware-offloaded and
    no unused breakout sub-port sits in it."""
    legs = set(switch.ports.values())
    verdict(rail=f"switch {switch.host}", expected="one bridge, all ports hw-offload, no spares")
    state = _state(fabric)
    ports = state.bridge_ports.get()
    holding = sorted({p.bridge or "?" for p in ports if p.interface in legs})
    bridge = _fabric_bridge([p for p in ports if p.interface in legs])
    members = [p for p in ports if p.bridge == bridge and bridge is not None]
    ethernet = state.ethernet.value or {}
    cages = {m.group("cage") for leg in legs if (m := _SUB.match(leg))}
    spares = []
    for p in members:
        name = p.interface or ""
        m = _SUB.match(name)
        running = ethernet[name].running if name in ethernet else None
        if name not in legs and m and m.group("cage") in cages and running is not True:
            spares.append(name)
    not_offloaded = [p.interface or "?" for p in members if p.hw_offload is not True]
    measured = (
        f"bridges holding legs: {', '.join(holding) or 'none'}; {len(members)} ports in "
        f"{bridge}; not offloaded: {', '.join(not_offloaded) or 'none'}; "
        f"unused sub-ports: {', '.join(spares) or 'none'}"
    )
    verdict(measured=measured)
    problems = []
    if not holding:
        problems.append("no leg is a port of any bridge")
    elif len(holding) > 1:
        problems.append(f"the legs are spread over bridges {', '.join(holding)}")
    if spares:
        problems.append(f"unused breakout sub-port(s) {', '.join(spares)} in bridge {bridge}")
    if not_offloaded:
        problems.append(f"hw-offload off on {', '.join(not_offloaded)}")
    if problems:
        verdict.fail(
            f"switch {switch.host}: {'; '.join(problems)}: the switch CPU forwards the fabric "
            "(~5-10 Gb/s); expected one bridge, every port hw-offload yes, no unused sub-port",
            "switch_cpu_forwarding",
            objects=SWITCH_WIDE,
        )


def test_switch_qos(node: Node, switch: SwitchSpec, fabric: Fabric, verdict: Verdict) -> None:
    """The leg's PFC agrees with the node's, as mlnx_qos reads it (both off, or on for the
    same priority), and no egress-rate-queueN caps it."""
    leg = switch.ports[node.name]
    host = qos_reads.node_qos(fabric, node.name)
    host_on = host.value.lossless if host.value is not None else False
    host_text = host.value.describe() if host.value is not None else f"not read ({host.error})"
    want = "pfc enabled (a profile for that priority)" if host_on else f"pfc {HOST_PFC}"
    expected = f"{want}, as the host ({host_text}); no egress-rate-queue cap"
    verdict(node=node.name, rail=f"switch {leg}", expected=expected)
    where = f"{node.name}: switch {switch.host} port {leg}"
    qos = _state(fabric).qos.get().get(leg)
    if qos is None:
        verdict.fail(
            f"{where}: no entry in /interface/ethernet/switch/qos/port",
            "pfc_stall",
            objects=SWITCH_WIDE,
            measured="no QoS entry",
        )
    caps = qos.limited_queues()
    cap_text = ", ".join(f"egress-rate-queue{q}={r}" for q, r in caps.items()) or "no caps"
    measured = f"pfc {qos.pfc}, trust-l3 {qos.trust_l3}, {cap_text}"
    verdict(measured=measured)
    switch_on = (qos.pfc or HOST_PFC) != HOST_PFC
    if switch_on and not host_on:
        verdict.fail(
            f"{where}: pfc {qos.pfc} (trust-l3 {qos.trust_l3}) while {node.name} runs "
            f"{host_text}; expected {expected}. Fix the switch: `pfc=disabled trust-l3=ignore` "
            f"on {leg}; or the host: PFC on the switch profile's priority "
            f"(`mlnx_qos -i <netdev> --pfc ...`) on every rail",
            "pfc_stall",
            objects=SWITCH_WIDE,
        )
    if host_on and not switch_on and host.value is not None:
        prios = host.value.pfc_priorities
        setting = ",".join("1" if p in prios else "0" for p in range(8))
        verdict.fail(
            f"{where}: pfc {qos.pfc} while {node.name} runs {host_text}; expected both off or "
            f"the same priority on both. Fix the host: `mlnx_qos -i <netdev> --pfc "
            f"0,0,0,0,0,0,0,0` on every fabric rail; or the switch: a PFC profile for priority "
            f"{','.join(map(str, prios))} on {leg} (host now --pfc {setting})",
            "pfc_mismatch",
        )
    if caps:
        verdict.fail(f"{where}: {cap_text}; expected {expected}", "egress_rate_cap")


def test_switch_resource(switch: SwitchSpec, fabric: Fabric, verdict: Verdict) -> None:
    """The switch answers /system/resource; its CPU load, board and version are recorded, with
    the way it was read (REST, SSH console, or switch.api auto's choice)."""
    state = _state(fabric)
    res = state.resource.get()
    verdict(
        rail=f"switch {switch.host}",
        measured=f"cpu-load {res.cpu_load_pct}%, read over the {state.api}",
        api=state.api,
        expected="recorded",
        cpu_load_pct=res.cpu_load_pct,
        board=res.board_name,
        version=res.version,
    )
