"""MTU on every rail netdev, and jumbo reachability end to end: a don't-fragment ping of
MTU-28 bytes, bound to the rail netdev, over every link in both directions (DOMAIN.md §2, §7).

All pings of the cluster run at once (one concurrent round in the fabric); each item asserts on
its own result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.cluster.hardware import l2mtu_need
from pytest_sparkfabric.measure import facts, reach, switch, witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Cluster, DirectedLink, Fabric, Rail, Verdict
    from pytest_sparkfabric.probes.ping import PingResult

pytestmark = [pytest.mark.mtu, pytest.mark.sparkfabric_needs("ip", "ping")]


def test_mtu(rail: Rail, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """The rail netdev's MTU equals the cluster's `mtu`."""
    verdict(node=rail.node, rail=rail.label, netdev=rail.netdev, expected=f"MTU {cluster.mtu}")
    mtu = facts.interface(fabric, rail).get().mtu_bytes
    verdict(measured=f"MTU {mtu}")
    if mtu != cluster.mtu:
        verdict.fail(
            f"{rail.node} {rail.netdev} ({rail.label}): MTU {mtu}; expected {cluster.mtu} "
            f"(cluster.yaml mtu)",
            "mtu_mismatch",
            fix=f"on {rail.node}, set MTU {cluster.mtu} on {rail.netdev} in its network config "
            f"(netplan `mtu: {cluster.mtu}`) and re-apply; now: `ip link set dev {rail.netdev} "
            f"mtu {cluster.mtu}`",
        )


def _mtu_of(fabric: Fabric, rail: Rail) -> int | None:
    iface = facts.interface(fabric, rail)
    return iface.value.mtu_bytes if iface.value is not None else None


def _no_carrier(fabric: Fabric, rails: tuple[Rail, ...]) -> list[Rail]:
    out = []
    for r in rails:
        iface = facts.interface(fabric, r)
        if iface.value is not None and not iface.value.carrier:
            out.append(r)
    return out


def _summary(p: PingResult) -> str:
    if p.ok:
        rtt = f", rtt {p.rtt_avg_ms:g} ms" if p.rtt_avg_ms is not None else ""
        return f"{p.received}/{p.transmitted} replies{rtt}"
    return p.error_text or p.verdict


def test_jumbo_ping(link: DirectedLink, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """`ping -M do -s <mtu-28> -I <netdev> <peer>` reaches the peer's address on this rail."""
    src, dst = link.src, link.dst
    payload = cluster.mtu - 28
    loss = fabric.thresholds["ping_loss_pct"]
    expected = f"DF {payload}-byte ping answered, loss {loss.expected()}"
    verdict(
        node=src.node,
        rail=f"{src.label}->{dst.id}",
        netdev=src.netdev,
        peer=f"{dst.node} {dst.netdev} {dst.address.ip}",
        expected=expected,
    )
    result = reach.ping(fabric, link).get()
    verdict(measured=_summary(result), loss_source=loss.source)
    if reach.answered(fabric, result):
        return
    head = (
        f"{src.node} {src.netdev} ({src.label}) -> {dst.node} {dst.address.ip} ({dst.netdev}): "
        f"`ping -M do -s {payload} -I {src.netdev}`"
    )
    if result.verdict == "local_mtu":
        verdict.fail(
            f"{head} was refused locally: `{result.error_text}`: the local interface's MTU is "
            f"{result.local_mtu_error}; expected {cluster.mtu}",
            "mtu_local",
        )
    down = _no_carrier(fabric, (src, dst))
    if down:
        names = ", ".join(f"{r.node} {r.netdev}" for r in down)
        note, rule = switch.leg_note(fabric, down[0].node)
        verdict.fail(f"{head}: {_summary(result)}; no link on {names}{note}", rule or "link_down")
    _miscabled(fabric, link, head, _summary(result), verdict)
    _address_problem(fabric, link, head, _summary(result), verdict)
    small = reach.small_ping(fabric, link)
    small_ok = small is not None and small.value is not None and reach.answered(fabric, small.value)
    # A smaller MTU on the path drops every jumbo frame; partial loss is another problem.
    if result.verdict == "lost" and result.received == 0 and small_ok:
        where = _path_hint(fabric, cluster, link)
        verdict.fail(
            f"{head}: {_summary(result)}, while a small ping gets through: a smaller MTU on "
            f"the path{where}; expected {cluster.mtu} end to end",
            "mtu_path",
        )
    small_text = ""
    if small is not None:
        small_text = (
            f"; a small ping fails too ({_summary(small.value)})"
            if small.value is not None
            else f"; small ping not measured: {small.error}"
        )
    verdict.fail(
        f"{head}: {_summary(result)}{small_text}; expected loss {loss.expected()} ({loss.source})",
        "unreachable_rail",
    )


def _miscabled(
    fabric: Fabric, link: DirectedLink, head: str, summary: str, verdict: Verdict
) -> None:
    """Fail with the miscabling mistake (diagnosis.miscabling) on a cable of the link's ends."""
    found = witness.findings(fabric, on=verdict.path, only=("miscabled",))
    if found:
        witness.fail(verdict, f"{head}: {summary}; {found[0].evidence}", found)


def _address_problem(
    fabric: Fabric, link: DirectedLink, head: str, summary: str, verdict: Verdict
) -> None:
    """Fail with the address rule when the peer does not carry its planned address."""
    dst = link.dst
    iface = facts.interface(fabric, dst)
    if iface.value is None or dst.address in iface.value.ipv4:
        return
    has = ", ".join(str(a) for a in iface.value.ipv4) or "no IPv4 address"
    seen = facts.observed_ipv4(fabric)
    owners = [
        f"{n} {dev}"
        for n, dev in seen.get(str(dst.address.ip), [])
        if (n, dev) != (dst.node, dst.netdev)
    ]
    shared = owners or any(len(seen.get(str(a.ip), [])) > 1 for a in iface.value.ipv4)
    elsewhere = f"; {dst.address.ip} is on {', '.join(owners)}" if owners else ""
    verdict.fail(
        f"{head}: {summary}; the peer {dst.node} {dst.netdev} does not carry its planned "
        f"address {dst.address} (it has {has}){elsewhere}",
        "duplicate_ip" if shared else "address_mismatch",
    )


def _path_hint(fabric: Fabric, cluster: Cluster, link: DirectedLink) -> str:
    peer_mtu = _mtu_of(fabric, link.dst)
    if peer_mtu is not None and peer_mtu < cluster.mtu:
        return f" (the peer {link.dst.node} {link.dst.netdev} has MTU {peer_mtu})"
    sw = cluster.spec.switch
    if sw is None:
        return ""
    legs = {n: sw.ports[n] for n in (link.src.node, link.dst.node) if n in sw.ports}
    state = switch.state(fabric).value
    ports = state.ethernet.value if state is not None else None
    if ports:
        small = [
            f"{leg} ({n}) has mtu {p.mtu_bytes} l2mtu {p.l2mtu_bytes}"
            for n, leg in legs.items()
            if (p := ports.get(leg)) is not None
            and ((p.mtu_bytes or 0) < cluster.mtu or (p.l2mtu_bytes or 0) < l2mtu_need(cluster.mtu))
        ]
        if small:
            return f" (switch port {'; '.join(small)})"
    where = ", ".join(f"{leg} ({n})" for n, leg in legs.items())
    return f" (both netdevs are at MTU {cluster.mtu}: check the switch ports {where})"
