"""Lossy-RoCE counters of one rail as a test item sees them: the mode it is judged in (lossless
where the host runs PFC, read by measure/qos.py; lossy otherwise), the limit, and the failure
naming each counter (the judgement itself is measure/counters.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_sparkfabric.measure import counters, qos

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.measure.qos import HostQos
    from pytest_sparkfabric.verdict import Verdict


def _lossless(fabric: Fabric, rail: Rail) -> HostQos | None:
    q = qos.rail_qos(fabric, rail).value
    return q if q is not None and q.lossless else None


def totals(windows: tuple[counters.Window, ...]) -> str:
    sums: dict[str, int] = {}
    for w in windows:
        if w.delta.value is None:
            continue
        for kind in ("discard", "sequence", "pause", "congestion"):
            grown = sum(w.delta.value.of_kind(kind).values())
            sums[kind] = sums.get(kind, 0) + grown
    return ", ".join(f"{k} +{v}" for k, v in sums.items()) or "no counters"


def declare(fabric: Fabric, rail: Rail, verdict: Verdict) -> None:
    """Record where, the mode (lossless or lossy, from the host's own QoS) and the limit."""
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


def check(fabric: Fabric, rail: Rail, verdict: Verdict, d: counters.Delta, label: str) -> None:
    """Fail the item, naming the counters, when `d` (the rail's growth over `label`) fails."""
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
