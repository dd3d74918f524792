"""The switch's configuration, read only (DOMAIN.md §7): each node's breakout leg up at 200G
with auto-negotiation off, FEC fec91 and an MTU that carries the cluster's; one hardware-
offloaded bridge holding the legs and no unused sub-port; no PFC or egress caps the hosts
do not share; the switch CPU load recorded."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import switch as switch_reads

if TYPE_CHECKING:
    from pytest_sparkfabric import Cluster, Fabric, Node, Verdict
    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.measure.switch import SwitchState
    from pytest_sparkfabric.probes.routeros import BridgePort, EthernetPort

pytestmark = pytest.mark.switch

RATE_GBPS = 200.0
SPEED = "200G-baseCR4"
FEC = "fec91"
ETHERNET_HEADER_B = 14
HOST_PFC = "disabled"  # hosts run PFC off unless configured otherwise (DOMAIN.md §7)
_SUB = re.compile(r"^(?P<cage>.+)-(?P<lane>\d{1,2})$")


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "?"}[value]


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
    """The node's leg: running / link-ok at 200Gbps, auto-negotiation off with speed
    200G-baseCR4 set by hand, FEC fec91."""
    leg = switch.ports[node.name]
    expected = f"link-ok, {RATE_GBPS:g}Gbps, auto-negotiation off, {SPEED}, {FEC}"
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
    if port.auto_negotiation is not False or port.speed != SPEED:
        verdict.fail(
            problem.format(what="not forced to 200G (auto-negotiation must be off)"),
            "autoneg_failed",
        )
    if not mon.link_ok or port.running is False:
        verdict.fail(problem.format(what="no link"), "link_down")
    if mon.rate_gbps != RATE_GBPS:
        verdict.fail(problem.format(what=f"rate {rate}"), "speed_degraded")
    if fec is not None and fec != FEC:
        verdict.fail(problem.format(what=f"FEC {fec}"), "fec_not_rs")


def test_switch_leg_mtu(
    node: Node, switch: SwitchSpec, cluster: Cluster, fabric: Fabric, verdict: Verdict
) -> None:
    """The leg's mtu carries the cluster MTU and its l2mtu the frame (mtu + 14)."""
    leg = switch.ports[node.name]
    need_l2 = cluster.mtu + ETHERNET_HEADER_B
    expected = f"mtu >= {cluster.mtu}, l2mtu >= {need_l2}"
    verdict(node=node.name, rail=f"switch {leg}", expected=expected)
    where = f"{node.name}: switch {switch.host} port {leg}"
    port = _port(_state(fabric), leg, where, verdict)
    measured = f"mtu {port.mtu_bytes}, l2mtu {port.l2mtu_bytes}"
    verdict(measured=measured)
    if (port.mtu_bytes or 0) < cluster.mtu or (port.l2mtu_bytes or 0) < need_l2:
        verdict.fail(f"{where}: {measured}; expected {expected}", "mtu_path")


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
        )
    if port.hw_offload is not True:
        verdict.fail(
            f"{where}: hw-offload {_yes(port.hw_offload)} (hw {_yes(port.hw_requested)}): "
            "the switch CPU forwards this port's traffic; expected hw-offload yes",
            "switch_cpu_forwarding",
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
        )


def test_switch_qos(node: Node, switch: SwitchSpec, fabric: Fabric, verdict: Verdict) -> None:
    """The leg's PFC agrees with the hosts (off by default) and no egress-rate-queueN caps it."""
    leg = switch.ports[node.name]
    expected = f"pfc {HOST_PFC} (as on the hosts), no egress-rate-queue cap"
    verdict(node=node.name, rail=f"switch {leg}", expected=expected)
    where = f"{node.name}: switch {switch.host} port {leg}"
    qos = _state(fabric).qos.get().get(leg)
    if qos is None:
        verdict.fail(
            f"{where}: no entry in /interface/ethernet/switch/qos/port",
            "pfc_stall",
            measured="no QoS entry",
        )
    caps = qos.limited_queues()
    cap_text = ", ".join(f"egress-rate-queue{q}={r}" for q, r in caps.items()) or "no caps"
    measured = f"pfc {qos.pfc}, trust-l3 {qos.trust_l3}, {cap_text}"
    verdict(measured=measured)
    if (qos.pfc or HOST_PFC) != HOST_PFC:
        verdict.fail(
            f"{where}: pfc {qos.pfc} (trust-l3 {qos.trust_l3}) while the hosts run PFC "
            f"{HOST_PFC}; expected {expected}",
            "pfc_stall",
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
