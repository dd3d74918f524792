"""IPv6 off on every fabric netdev (stable RoCE GID indices), and a RoCE v2 GID carrying each
rail's IPv4 address, at whatever index (DOMAIN.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import facts
from pytest_sparkfabric.probes.sysfs import find_rocev2_gid

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Rail, Verdict

pytestmark = [pytest.mark.ipv6, pytest.mark.sparkfabric_needs("ip")]


def test_ipv6_disabled(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """disable_ipv6 = 1 on the rail netdev and no inet6 address on it (link-local included)."""
    expected = "disable_ipv6=1, no inet6 address"
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected=expected)
    iface = facts.interface(fabric, rail).get()
    disabled = facts.sysctls(fabric, rail).get().disable_ipv6
    inet6 = ", ".join(str(a) for a in iface.ipv6) or "no inet6 address"
    verdict(measured=f"disable_ipv6={disabled}, {inet6}")
    if disabled != 1 or iface.ipv6:
        verdict.fail(
            f"{rail.node} {rail.netdev} ({rail.label}): disable_ipv6={disabled}, {inet6}; "
            f"expected {expected}",
            "ipv6_enabled",
        )


def test_rocev2_gid(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The rail's RoCE device has a RoCE v2 GID carrying each IPv4 address of its netdev."""
    verdict(
        node=rail.node,
        rail=rail.label,
        netdev=rail.netdev,
        rdma=rail.rdma,
        expected="a RoCE v2 GID with the netdev's IPv4",
    )
    addrs = facts.interface(fabric, rail).get().ipv4 or (rail.address,)
    roce = facts.roce(fabric, rail).get()
    found, missing = [], []
    for addr in addrs:
        entry = find_rocev2_gid(roce.gids, rail.netdev, addr.ip)
        if entry is None:
            missing.append(str(addr.ip))
        else:
            found.append(f"{addr.ip} at index {entry.index}")
            verdict(gid_index=entry.index)
    verdict(measured="; ".join(found) or "none")
    if missing:
        table = "; ".join(
            f"[{g.index}] {g.type or '?'} {g.ndev or '?'} {g.ipv4 or g.gid}" for g in roce.gids
        )
        verdict.fail(
            f"{rail.node} {rail.rdma} ({rail.label}): no RoCE v2 GID carries "
            f"{', '.join(missing)} of {rail.netdev}; GIDs seen: {table or 'none'}",
            "gid_missing",
        )
