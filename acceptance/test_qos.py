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

from pytest_sparkfabric.measure import counters, qos, rdma, soak

if TYPE_CHECKING:
    from pytest_sparkfabric import Cluster, Fabric, Node, Rail, Verdict
    from pytest_sparkfabric.measure.qos import HostQos


def pfc_setting(prios: tuple[int, ...]) -> str:
    """mlnx_qos's own flag for a PFC set: one 0/1 per priority."""
    return ",".join("1" if p in prios else "0" for p in range(8))


def host_fix(node: str, netdev: str, prios: tuple[int, ...]) -> str:
    return f"on {node}: `mlnx_qos -i {netdev} --pfc {pfc_setting(prios)}`"


@pytest.mark.qos
def test_host_qos(node: Node, cluster: Cluster, fabric: Fabric, verdict: Verdict) -> None:
    """Every fabric rail's PFC and trust are read (mlnx_qos, else dcb) and agree with each other
    and, without a switch, with the cable peer's (the switch side is test_switch_qos)."""
    verdict(node=node.name, expected="PFC read on every rail; the same on both ends of a cable")
    own = qos.node_qos(fabric, node.name)
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


def _lossless(fabric: Fabric, rail: Rail) -> HostQos | None:
    q = qos.rail_qos(fabric, rail).value
    return q if q is not None and q.lossless else None


def _totals(windows: tuple[counters.Window, ...]) -> str:
    sums: dict[str, int] = {}
    for w in windows:
        if w.delta.value is None:
            continue
        for kind in ("discard", "sequence", "pause", "congestion"):
            grown = sum(w.delta.value.of_kind(kind).values())
            sums[kind] = sums.get(kind, 0) + grown
    return ", ".join(f"{k} +{v}" for k, v in sums.items()) or "no counters"


def _expect(fabric: Fabric, rail: Rail, verdict: Verdict) -> None:
    th = fabric.thresholds["discard_pct"]
    lossless = _lossless(fabric, rail)
    mode = f"lossless ({lossless.describe()})" if lossless else "lossy (PFC off or not read)"
    verdict(
        node=rail.node,
        rail=rail.label,
        netdev=rail.netdev,
        expected=(
            "no discard or sequence-error growth"
            if lossless
            else f"discards {th.expected()} of frames received"
        ),
        source=th.source,
        mode=mode,
    )


def _judge(fabric: Fabric, rail: Rail, verdict: Verdict, d: counters.Delta, label: str) -> None:
    lossless = _lossless(fabric, rail)
    mode = f"lossless ({lossless.describe()})" if lossless else "lossy (PFC off or not read)"
    th = fabric.thresholds["discard_pct"]
    found = counters.judge(d, lossless=lossless is not None, discard_pct_max=th.value)
    if found:
        text = "; ".join(f"{f.counter} +{f.growth} ({f.why})" for f in found[:3])
        verdict.fail(
            f"{rail.node} {rail.netdev} ({rail.label}), {mode}, during {label}: {text}",
            "rx_discards",
        )


@pytest.mark.bandwidth
def test_rail_counters(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Across every RDMA round: no drops where the host runs PFC (lossless), and drops below
    `thresholds.discard_pct` of the frames received anywhere; pause, ECN and CNP recorded."""
    _expect(fabric, rail, verdict)
    windows = rdma.pair_runs(fabric).counter_windows.get(rail.id, ())
    if not windows:
        why = fabric.down_line([rail.node]) or "the rail took part in no RDMA round"
        verdict.fail(f"not measured: {rail.node} {rail.netdev}: {why}")
    verdict(measured=_totals(windows))
    for w in windows:
        if w.delta.value is None:
            verdict.fail(
                f"not measured: {rail.node} {rail.netdev} during {w.label}: {w.delta.error}"
            )
        _judge(fabric, rail, verdict, w.delta.value, w.label)


@pytest.mark.soak
def test_soak_counters(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The same judgement over the heat soak (its first and last `ethtool -S` reading of the
    rail; the soak reads no hw_counters)."""
    _expect(fabric, rail, verdict)
    run = soak.run(fabric)
    samples = soak.rail_samples(fabric, rail)
    if len(samples) < 2:
        errors = run.read_errors.get(rail.id, ["no reading"])
        verdict.fail(
            f"not measured: {rail.node} {rail.netdev}: {len(samples)} ethtool -S reading(s) "
            f"during the soak; {errors[-1]}"
        )
    first, last = samples[0], samples[-1]
    d = counters.delta(
        counters.snapshot(first.t, first.stats, None), counters.snapshot(last.t, last.stats, None)
    )
    verdict(measured=", ".join(f"{k} +{v}" for k, v in sorted(d.growth.items()) if v) or "0")
    _judge(fabric, rail, verdict, d, f"the soak ({last.t - first.t:.0f} s)")
