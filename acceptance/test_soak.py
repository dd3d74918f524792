"""Heat soak (DOMAIN.md §6): GPUs burning on every node, every cable saturated both ways, per-lane
error rates sampled on every receiver. Fails on a lane far above its neighbours (a marginal
cable, the only warning before it drops the link), a pre-FEC BER too close to the FEC limit, or
any growth of post-FEC symbol errors, CRC errors or link-down events."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure import evidence, links, soak
from pytest_sparkfabric.measure.soak_math import (
    growth,
    lane_outliers,
    max_ber,
    max_lane_rates,
    windows,
)

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Rail, Verdict
    from pytest_sparkfabric.diagnosis.rules import RuleId

pytestmark = pytest.mark.soak

GPU_BUSY_PCT = soak.GPU_BUSY_PCT
LOAD_RULES: tuple[RuleId, ...] = ("link_down", "half_port", "nic_throttled")


def _peers(fabric: Fabric, rail: Rail) -> list[Rail]:
    """The rails at the other end of this rail's cable (its rail links)."""
    out = []
    for link in fabric.plan.links:
        if link.a == rail and link.b not in out:
            out.append(link.b)
        elif link.b == rail and link.a not in out:
            out.append(link.a)
    return out


def test_soak_link(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Per-lane corrected-error rates, pre-FEC BER and post-FEC counters of the rail's receiver,
    over every sampling window of the soak."""
    ratio_t = fabric.thresholds["lane_ratio_max"]
    floor_t = fabric.thresholds["lane_floor_per_s"]
    ber_t = fabric.thresholds["ber_max"]
    verdict(
        node=rail.node,
        rail=rail.label,
        netdev=rail.netdev,
        expected=f"lane ratio {ratio_t.expected()}, BER {ber_t.expected()}, "
        "no symbol/CRC/link-down growth",
    )
    run = soak.run(fabric)
    samples = soak.rail_samples(fabric, rail)
    if len(samples) < 2:
        errors = run.read_errors.get(rail.id, ["no reading"])
        pytest.fail(
            f"not measured: {rail.id}: {len(samples)} ethtool -S reading(s) during the soak; "
            f"{errors[-1]}",
            pytrace=False,
        )
    eth = links.ethtool(fabric, rail).value
    ws = windows(samples, eth.speed_mbps if eth is not None else None)
    rates = max_lane_rates(ws)
    ber = max_ber(ws)
    verdict(
        lane_rates_per_s=", ".join(f"lane{k} {v:.3g}" for k, v in rates.items()) or "none",
        max_ber=ber if ber is not None else "n/a",
        bits_estimated=any(w.bits_estimated for w in ws),
        soak_s=round(run.duration_s),
        nic_max_c=run.nic_temp_c.get(rail.node),
        gpu_max_c=run.gpu_temp_c.get(rail.node),
    )
    outliers = lane_outliers(ws, ratio_max=ratio_t.value, floor_per_s=floor_t.value)
    grew = growth(ws)
    where, nodes = rail.id, (rail.node,)
    found: list[Finding] = []
    lines: list[str] = []
    for o in outliers:
        seen = (
            f"lane {o.lane} {o.rate_per_s:.3g} errors/s = {o.ratio:.3g}x the other lanes "
            f"(median {o.median_others_per_s:.3g}/s) {o.start:.0f}-{o.end:.0f} s into the soak"
        )
        if o.worst_ratio > o.ratio:
            seen += f", worst {o.worst_rate_per_s:.3g}/s ({o.worst_ratio:.3g}x)"
        lines.append(f"{rail.netdev}: {seen}, {ratio_t.describe()}")
        short = f"lane {o.lane} ~{o.ratio:.0f}x its neighbours {o.start:.0f} s into the soak"
        found.append(Finding(RULES["marginal_cable"], where, nodes, short))
    if grew and not outliers:
        # The far end of the cable may have seen what this end did not: a hot lane.
        for peer in _peers(fabric, rail):
            pws = windows(soak.rail_samples(fabric, peer))
            for o in lane_outliers(pws, ratio_max=ratio_t.value, floor_per_s=floor_t.value):
                short = (
                    f"lane {o.lane} ~{o.ratio:.0f}x its neighbours {o.start:.0f} s into the soak"
                )
                found.append(Finding(RULES["marginal_cable"], peer.id, (peer.node,), short))
    if grew:
        seen = f"{grew.describe()} during the soak"
        if run.stopped_early:
            seen += f"; the soak stopped early: {run.stopped_early}"
        lines.append(f"{rail.netdev}: {seen}; expected no growth at all")
        found.append(Finding(RULES["post_fec_errors"], where, nodes, grew.describe()))
    if ber is not None and not ber_t.ok(ber):
        seen = f"pre-FEC BER {ber:.3g}"
        lines.append(f"{rail.netdev}: {seen}, {ber_t.describe()}")
        found.append(Finding(RULES["ber_high"], where, nodes, seen))
    verdict(measured="; ".join(lines) or "clean")
    if found:
        evidence.fail(verdict, "\n".join(lines), found)


def test_soak_load(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """The soak really loaded the node: the GPU load ran and the node's traffic flowed."""
    verdict(node=node.name, expected=f"GPU load running (utilization >= {GPU_BUSY_PCT:g}%)")
    run = soak.run(fabric)
    verdict(
        gpu_max_c=run.gpu_temp_c.get(node.name),
        nic_max_c=run.nic_temp_c.get(node.name),
        gpu_util_max_pct=run.gpu_util_pct.get(node.name),
        soak_s=round(run.duration_s),
    )
    problems = []
    if node.name in run.idle:
        problems.append(run.idle[node.name])
    if node.name in run.load_error:
        problems.append(run.load_error[node.name])
    result = run.load.get(node.name)
    if result is not None and result.rc == 127:
        problems.append(
            f"{node.name}: the GPU load `{result.command}` was not found (soak.gpu_load)"
        )
    util = run.gpu_util_pct.get(node.name)
    if util is None:
        # No reading is no proof of load: the soak must not pass by omission.
        problems.append(f"{node.name}: nvidia-smi gave no GPU utilization during the soak")
    elif util < GPU_BUSY_PCT:
        problems.append(f"{node.name}: GPU utilization peaked at {util:g}% during the soak")
    if not run.stopped_early:
        mine = [k for k in run.traffic_error if k.startswith(f"{node.name}:")]
        problems += [f"traffic {k}: {run.traffic_error[k]}" for k in mine]
    rates = [
        f"{k} {v:.1f} Gb/s"
        for k, v in run.traffic.items()
        if v is not None and k.startswith(f"{node.name}:")
    ]
    verdict(measured=", ".join(rates) or "no traffic result")
    if problems:
        evidence.fail(
            verdict,
            "the soak did not load this node as planned, so its result proves less:\n"
            + "\n".join(problems),
            evidence.findings(fabric, [node.name], only=LOAD_RULES),
        )
