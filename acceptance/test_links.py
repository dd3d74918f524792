"""Link health of every rail: netdev up at its declared speed (`link_speed`, 200G by default) with
RS FEC, PCIe halves at Gen5 x4, RoCE ports
ACTIVE and bound to their netdev (DOMAIN.md §1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.measure import facts, links, switch, witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Rail, Verdict

pytestmark = [pytest.mark.links, pytest.mark.sparkfabric_needs("ethtool", "ip")]

FEC = "RS"


def _where(rail: Rail) -> str:
    return f"{rail.node} {rail.netdev} ({rail.label})"


def test_link(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The rail netdev is administratively up, has carrier, runs at its declared speed
    (200000Mb/s unless cluster.yaml says 100G) with RS FEC."""
    declared = rail.link_speed_mbps
    expected = f"up, carrier, {declared}Mb/s, FEC {FEC}"
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected=expected)
    verdict(cables=",".join(o.id for o in witness.cable(fabric, rail) if o.kind == "cable"))
    iface = facts.interface(fabric, rail).get()
    eth = links.ethtool(fabric, rail)
    fec = links.fec(fabric, rail)
    seen = ["up" if iface.admin_up else "admin DOWN", "carrier" if iface.carrier else "no carrier"]
    speed = eth.value.speed_mbps if eth.value else None
    if eth.value is not None:
        link = eth.value.link_detected
        reason = f" ({eth.value.link_detected_reason})" if eth.value.link_detected_reason else ""
        seen.append(f"{speed}Mb/s" if speed else "speed Unknown")
        if link is False:
            seen.append(f"Link detected: no{reason}")
    else:
        seen.append(f"ethtool: {eth.error}")
    active = fec.value.active if fec.value else None
    seen.append(f"FEC {active}" if fec.value else f"FEC ?: {fec.error}")
    measured = ", ".join(seen)
    verdict(measured=measured)

    problem = f"{_where(rail)}: {{what}}; seen: {measured}; expected: {expected}"
    if not iface.admin_up:
        verdict.fail(problem.format(what="administratively down"), "admin_down")
    if not iface.carrier:
        note, rule = switch.leg_note(fabric, rail.node)
        verdict.fail(
            problem.format(what="cabled in cluster.yaml but has no link") + note,
            rule or "link_down",
            objects=witness.cable(fabric, rail),
        )
    if speed != declared:
        eth.get()
        what = f"link speed {speed}Mb/s"
        if speed is not None and speed < declared:
            g = declared // 1000
            what = (
                f"negotiated {speed // 1000}G, declared {g}G: a {speed // 1000}G cable or a "
                f"breakout on the Spark side (the declared speed needs a whole {g}G port)"
            )
            if rail.node in (
                fabric.cluster.spec.switch.ports if fabric.cluster.spec.switch else {}
            ):
                what += f", or the switch leg is not forced to {g}G"
        verdict.fail(problem.format(what=what), "speed_degraded")
    if active is None or not active.upper().startswith(FEC):
        fec.get()
        verdict.fail(problem.format(what=f"active FEC is {active}, not {FEC}"), "fec_not_rs")


def test_pcie(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Each PCIe half of the NIC trained at 32.0 GT/s, width 4."""
    expected = f"{hardware.PCIE_SPEED_GTS:.1f} GT/s x{hardware.PCIE_WIDTH}"
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, pci=rail.pci, expected=expected)
    link = facts.pcie(fabric, rail).get()
    verdict(measured=link.text)
    if link.speed_gt_s != hardware.PCIE_SPEED_GTS or link.width != hardware.PCIE_WIDTH:
        best = ""
        if link.max_speed_gt_s is not None and link.max_width is not None:
            best = f" (the device supports {link.max_speed_gt_s:.1f} GT/s x{link.max_width})"
        verdict.fail(
            f"{_where(rail)}: PCIe {rail.pci} runs at {link.text}{best}; expected {expected}",
            "pcie_degraded",
            objects=witness.pcie_half(fabric, rail),
        )


def test_roce_port(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The rail's RoCE device exists, is bound to the rail netdev, and its port is ACTIVE/LinkUp."""
    expected = f"{rail.rdma} port 1 ACTIVE, LinkUp, netdev {rail.netdev}"
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, rdma=rail.rdma, expected=expected)
    roce = facts.roce(fabric, rail).get()
    where = f"{rail.node} {rail.rdma} ({rail.label})"
    if not roce.present:
        verdict.fail(
            f"{where}: no RoCE device {rail.rdma} "
            f"(/sys/class/infiniband/{rail.rdma} missing); expected {expected}",
            "rdma_netdev_mismatch",
            measured="no such device",
        )
    measured = (
        f"{roce.state.name or '?'}, {roce.phys_state.name or '?'}, netdev {roce.netdev or '?'}"
    )
    verdict(measured=measured)
    if roce.netdev != rail.netdev:
        verdict.fail(
            f"{where}: bound to netdev {roce.netdev or '(none)'}; expected {rail.netdev}",
            "rdma_netdev_mismatch",
        )
    if not (roce.active and roce.link_up):
        iface = facts.interface(fabric, rail)
        cause, rule = "", None
        if iface.value is not None and not iface.value.carrier:
            note, rule = switch.leg_note(fabric, rail.node)
            cause = f" ({rail.netdev} has no carrier: the cable has no link{note})"
        verdict.fail(
            f"{where}: port state {roce.state.name or '?'}, physical state "
            f"{roce.phys_state.name or '?'}{cause}; expected ACTIVE, LinkUp",
            rule or "link_down",
            objects=witness.cable(fabric, rail),
        )


@pytest.mark.sparkfabric_needs("ibv_devinfo")
def test_roce_mtu(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The rail's RoCE port is PORT_ACTIVE with the active MTU its netdev MTU allows (4096 at
    the cluster's 9000; ibv_devinfo, read only)."""
    want = hardware.roce_active_mtu(fabric.cluster.mtu)
    expected = f"PORT_ACTIVE, active_mtu {want}"
    verdict(node=rail.node, rail=rail.label, rdma=rail.rdma, expected=expected)
    got = links.roce_port(fabric, rail).get()
    verdict(measured=f"{got.state or '?'}, active_mtu {got.active_mtu_bytes or '?'}")
    where = f"{rail.node} {rail.rdma} ({rail.label})"
    if got.active and got.active_mtu_bytes == want:
        return
    if not got.active:
        iface = facts.interface(fabric, rail).value
        note, rule = (
            switch.leg_note(fabric, rail.node) if iface and not iface.carrier else ("", None)
        )
        verdict.fail(
            f"{where}: port {got.state or '?'} (ibv_devinfo){note}; expected {expected}",
            rule or "link_down",
            objects=witness.cable(fabric, rail),
        )
    verdict.fail(
        f"{where}: RoCE active MTU {got.active_mtu_bytes} (ibv_devinfo), expected {want} for "
        f"the cluster MTU {fabric.cluster.mtu}: {rail.netdev}'s MTU is smaller, so every RDMA "
        "packet is cut to the smaller size",
        "mtu_mismatch",
    )
