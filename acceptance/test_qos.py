"""Host QoS and lossy-RoCE counters (DOMAIN.md §7; issue 12 items 3-4).

Host PFC is read, never assumed: `mlnx_qos -i <netdev>` on every fabric rail (iproute2 `dcb` where
mlnx_qos is missing). Working Spark builds run PFC off on both ends; others enable PFC on one
priority: either is fine when every rail of a node, its cable peers and (test_switch_qos) its
switch leg agree. Over every RDMA bandwidth round each rail's drop, sequence-error, pause and
ECN/CNP counters are read before and after; drops fail where the configuration is lossless, and
large drops fail anywhere (measure/counters.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import counters, qos, rdma
from pytest_sparkfabric.outcome import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric import Cluster, Fabric, Node, Rail, Verdict


def pfc_setting(prios: tuple[int, ...]) -> str:
    """mlnx_qos's own flag for a PFC set: one 0/1 per priority."""
    return ",".join("1" if p in prios else "0" for p in range(8))


def host_fix(node: str, netdev: str, prios: tuple[int, ...]) -> str:
    return f"on {node}: `mlnx_qos -i {netdev} --pfc {pfc_setting(prios)}`"


@pytest.mark.qos
@pytest.mark.sparkfabric_needs("mlnx_qos|dcb")
def test_host_qos(node: Node, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """Every fabric rail's PFC and trust are read (mlnx_qos, else dcb) and agree with each other
    and, without a switch, with the cable peer's (the switch side is test_switch_qos)."""
    verdict(node=node.name, expected="PFC read on every rail; the same on both ends of a cable")
    own = qos.node_qos(fabric, node.name).require()
    if own.value is None:
        reason = own.error or "no reading"
        verdict.fail(reason, "pfc_mismatch" if "disagree" in reason else None, measured=reason)
    mine = own.value
    verdict(measured=mine.describe())
    if cluster.topology == "switch":
        return
    for link in fabric.plan.links:
        if node.name not in (link.a.node, link.b.node):
            continue
        me, peer = (link.a, link.b) if link.a.node == node.name else (link.b, link.a)
        theirs = qos.rail_qos(fabric, peer).value
        if theirs is None or theirs.pfc_priorities == mine.pfc_priorities:
            continue
        verdict.fail(
            f"{me.node} {me.netdev} ({me.label}): {mine.describe()}; its cable peer "
            f"{peer.node} {peer.netdev}: {theirs.describe()}; expected the same on both ends. "
            f"Either side can move: {host_fix(me.node, me.netdev, theirs.pfc_priorities)}, or "
            f"{host_fix(peer.node, peer.netdev, mine.pfc_priorities)}",
            "pfc_mismatch",
        )


@pytest.mark.bandwidth
@pytest.mark.sparkfabric_needs("ib_write_bw", "ethtool")
def test_rail_counters(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Across every traffic window so far (each RDMA round, and the TCP rounds and NCCL run if
    they ran first): no post-FEC symbol, CRC or link-down growth; no drops where the host runs
    PFC (lossless), and drops below `thresholds.discard_pct` of the frames received anywhere;
    pause, ECN and CNP recorded."""
    counters.declare(fabric, rail, verdict)
    rdma.pair_runs(fabric)
    windows = counters.rail_log(fabric).of(rail.id)
    if not windows:
        peers = [x.b if x.a == rail else x.a for x in fabric.plan.links if rail in (x.a, x.b)]
        gone = fabric.gone([rail.node, *(p.node for p in peers)])
        if gone is not None:
            raise gone  # a node it would have sent to or through does not answer
        raise NotMeasured(
            f"{rail.node} {rail.netdev}: the rail took part in no traffic round", nodes=[rail.node]
        )
    verdict(measured=f"{counters.totals(windows)} over {len(windows)} traffic window(s)")
    counters.check(fabric, rail, verdict, windows)
