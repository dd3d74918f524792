"""Rail addresses as planned and unique, every rail in its subnet, and the ARP / rp_filter
sysctls that shared subnets and multi-rail RoCE need (DOMAIN.md §2)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import facts
from pytest_sparkfabric.probes import sysfs

if TYPE_CHECKING:
    from ipaddress import IPv4Interface

    from pytest_sparkfabric import Cluster, Fabric, Node, Rail, Verdict


pytestmark = [pytest.mark.addressing, pytest.mark.sparkfabric_needs("ip")]


def _where(rail: Rail) -> str:
    return f"{rail.node} {rail.netdev} ({rail.label})"


def _observed(fabric: Fabric, rail: Rail) -> tuple[IPv4Interface, ...]:
    return facts.interface(fabric, rail).get().ipv4


def _text(addrs: tuple[IPv4Interface, ...]) -> str:
    return ", ".join(str(a) for a in addrs) or "no IPv4 address"


def test_rail_address(rail: Rail, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """The rail netdev carries exactly the IPv4 address cluster.yaml gives it, nothing else."""
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected=str(rail.address))
    seen = _observed(fabric, rail)
    verdict(measured=_text(seen))
    if seen == (rail.address,):
        return
    planned = {r.address.ip: r for r in cluster.rails}
    others = [
        f"{a} is planned for {planned[a.ip].id}"
        for a in seen
        if a.ip in planned and planned[a.ip] != rail
    ]
    extra = f" ({'; '.join(others)})" if others else ""
    verdict.fail(
        f"{_where(rail)}: carries {_text(seen)}{extra}; expected exactly {rail.address}",
        "duplicate_ip" if others else "address_mismatch",
    )


def test_address_unique(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """No address of the rail netdev is seen on any other interface of any node."""
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected="unique in the cluster")
    seen = _observed(fabric, rail)
    owners = facts.observed_ipv4(fabric)
    clashes = []
    for addr in seen:
        elsewhere = [o for o in owners.get(str(addr.ip), []) if o != (rail.node, rail.netdev)]
        if elsewhere:
            where = ", ".join(f"{n} {dev}" for n, dev in elsewhere)
            clashes.append(f"{addr.ip} is also on {where}")
    verdict(measured="; ".join(clashes) or f"unique: {_text(seen)}")
    if clashes:
        verdict.fail(
            f"{_where(rail)}: {'; '.join(clashes)}; expected every address on one interface only",
            "duplicate_ip",
        )


def test_rail_subnet(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Every address of the rail netdev lies in the rail's planned subnet (same prefix)."""
    net = rail.address.network
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected=f"in {net}")
    seen = _observed(fabric, rail)
    verdict(measured=", ".join(str(a.network) for a in seen) or "no IPv4 address")
    wrong = [a for a in seen if a.network != net]
    if not seen or wrong:
        verdict.fail(
            f"{_where(rail)}: {_text(tuple(wrong) or seen)} is not in the planned subnet "
            f"{net}; expected an address in {net}",
            "address_mismatch",
        )


def _raw(files: Mapping[str, str | None], netdev: str, name: str) -> str:
    paths = sysfs.sysctl_paths(netdev)
    a = sysfs.int_value(files.get(paths[f"all.{name}"]))
    i = sysfs.int_value(files.get(paths[f"{netdev}.{name}"]))
    return f"all={a}, {netdev}={i}"


def _sharing(node: Node, cluster: Cluster, fabric: Fabric) -> tuple[dict[str, Rail], str]:
    """The node's fabric netdevs that can answer each other's ARP, and why."""
    if cluster.topology == "switch":
        # Both rails of every node hang on one switch: one broadcast domain, whatever subnets.
        return {r.netdev: r for r in node.rails}, "share the switch's L2 network"
    shared: dict[str, Rail] = {}
    for x, y in combinations(node.rails, 2):
        nets_x = {a.network for a in _observed(fabric, x)} | {x.address.network}
        nets_y = {a.network for a in _observed(fabric, y)} | {y.address.network}
        if any(p.overlaps(q) for p in nets_x for q in nets_y):
            shared.setdefault(x.netdev, x)
            shared.setdefault(y.netdev, y)
    return shared, "share a subnet"


def test_arp_sysctls(node: Node, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """Where fabric netdevs of the node share a subnet or an L2 network (a switch), effective
    arp_ignore >= 1 and arp_announce = 2 on them: otherwise one answers ARP for the other."""
    verdict(
        node=node.name,
        expected="arp_ignore>=1, arp_announce=2 where rails share a subnet or L2 network",
    )
    node_facts = facts.node(fabric, node.name).get()
    shared, why = _sharing(node, cluster, fabric)
    if len(shared) < 2:
        verdict(measured="no two fabric netdevs share a subnet or L2 network")
        return
    bad = []
    seen = []
    for netdev, rail in shared.items():
        s = facts.sysctls(fabric, rail).get()
        seen.append(f"{netdev}: arp_ignore={s.arp_ignore} arp_announce={s.arp_announce}")
        if s.arp_ignore is None or s.arp_ignore < 1 or s.arp_announce != 2:
            bad.append(
                f"{netdev} effective arp_ignore={s.arp_ignore} "
                f"({_raw(node_facts.files, netdev, 'arp_ignore')}), arp_announce={s.arp_announce} "
                f"({_raw(node_facts.files, netdev, 'arp_announce')})"
            )
    verdict(measured="; ".join(seen))
    if bad:
        verdict.fail(
            f"{node.name}: {', '.join(shared)} {why}; {'; '.join(bad)}; expected "
            "arp_ignore >= 1 and arp_announce = 2 (the kernel uses the larger of all and the "
            "interface)",
            "arp_flux",
        )


def test_rp_filter(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Effective rp_filter (max of all and the netdev) is 0 or 2 on every fabric netdev."""
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected="rp_filter 0 or 2")
    s = facts.sysctls(fabric, rail).get()
    verdict(measured=f"rp_filter {s.rp_filter}")
    if s.rp_filter not in (0, 2):
        raw = _raw(facts.node(fabric, rail.node).get().files, rail.netdev, "rp_filter")
        verdict.fail(
            f"{_where(rail)}: effective rp_filter {s.rp_filter} ({raw}; the kernel uses the "
            "larger); expected 0 or 2",
            "rp_filter_strict",
        )
