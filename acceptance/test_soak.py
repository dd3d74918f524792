"""Heat soak (DOMAIN.md §6): GPUs burning on every node, every cable saturated both ways, per-lane
error rates sampled on every receiver. Fails on a lane far above its neighbours (a marginal
cable, the only warning before it drops the link), a pre-FEC BER too close to the FEC limit, or
any growth of post-FEC symbol errors, CRC errors or link-down events; a NIC without per-lane
counters is "not measured". Per node: the GPU load ran the whole soak and loaded the GPU, the NIC
warmed under it, and no temperature passed its limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure import links, soak, witness
from pytest_sparkfabric.measure.counters import describe, post_fec_growth
from pytest_sparkfabric.measure.soak import LaneFinding, has_lane_counters, max_ber, max_lane_rates
from pytest_sparkfabric.outcome import NotMeasured

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_sparkfabric import Fabric, Node, Rail, Verdict
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.counters import Window
    from pytest_sparkfabric.transport import RunResult

pytestmark = [
    pytest.mark.soak,
    pytest.mark.sparkfabric_needs("soak.gpu_load", "ib_write_bw", "nvidia-smi", on="cluster"),
]

GPU_BUSY_PCT = soak.GPU_BUSY_PCT
LOAD_RULES: tuple[RuleId, ...] = ("link_down", "miscabled", "half_port", "nic_throttled")
LOAD_END_SLACK_S = 2.0
"""A load that ends this close to its planned length ended on time (start-up, clock steps)."""


def _peers(fabric: Fabric, rail: Rail) -> list[Rail]:
    """The rails at the other end of this rail's cable (its rail links)."""
    out = []
    for link in fabric.plan.links:
        if link.a == rail and link.b not in out:
            out.append(link.b)
        elif link.b == rail and link.a not in out:
            out.append(link.a)
    return out


def _lanes(
    fabric: Fabric, rail: Rail, run: soak.SoakRun, ws: Sequence[Window]
) -> tuple[list[LaneFinding], str, float]:
    eth, node = links.ethtool(fabric, rail).value, fabric.cluster.node(rail.node)
    module = links.module(fabric, node, rail.port).value
    return soak.lanes(rail, run, ws, fabric.thresholds, eth, module)


def _rate(per_s: float) -> str:
    return f"{per_s:.3g}" if per_s < 1000 else f"{per_s:,.0f}"


def _seen(o: LaneFinding, started_s: float) -> str:
    around = (
        f"~{o.rate_per_s / o.median_others_per_s:,.0f}x the other lanes' median "
        f"{_rate(o.median_others_per_s)}/s"
        if o.median_others_per_s > 0
        else "the other lanes log nothing"
    )
    grew = f", {o.grew:,.0f}x its coolest window's rate" if o.grew is not None else ""
    return (
        f"lane {o.lane} at {_rate(o.rate_per_s)} errors/s ({around}{grew}, lane BER "
        f"{o.lane_ber:.3g}), {o.start_s - started_s:.0f}-{o.end_s - started_s:.0f} s into the "
        f"soak: {o.why}"
    )


def test_soak_link(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """Per-lane corrected-error rates and BER, total pre-FEC BER and post-FEC counters of the
    rail's receiver over every sampling window of the soak (measure/soak.py)."""
    ratio_t = fabric.thresholds["lane_ratio_max"]
    ber_t = fabric.thresholds["ber_max"]
    cables = [o for o in witness.cable(fabric, rail) if o.kind == "cable"]
    verdict(
        node=rail.node,
        rail=rail.label,
        netdev=rail.netdev,
        expected=f"no lane standing alone ({ratio_t.expected()} its neighbours) and growing "
        f"with heat, BER {ber_t.expected()} per lane and in total, no post-FEC growth",
        cables=",".join(o.id for o in cables),
    )
    run = soak.run(fabric)
    all_ws = soak.rail_windows(fabric, rail)
    ws = tuple(w for w in all_ws if w.error is None)
    if not ws:
        why = next((w.error for w in all_ws if w.error), "no ethtool -S reading")
        raise NotMeasured(f"{rail.id}: no counter window during the soak; {why}", nodes=[rail.node])
    grew = post_fec_growth(ws)
    if not has_lane_counters(ws):
        seen = f"; meanwhile {describe(grew)}" if grew else ""
        raise NotMeasured(
            f"{rail.netdev} exposes no rx_err_lane_*_phy counters ({rail.id}), so no lane of "
            f"its cable can be judged during the soak{seen}",
            nodes=[rail.node],
            missing="per-lane PHY error counters",
            fix="a driver and firmware that export the per-lane PHY counters (mlx5: the per-lane "
            f"error counter capability; `ethtool -S {rail.netdev} | grep rx_err_lane` must list "
            "them)",
        )
    found_lanes, source, speed = _lanes(fabric, rail, run, ws)
    ber = max_ber(ws, speed)
    verdict(
        lanes_in_use=source,
        lane_rates_per_s=", ".join(f"lane{k} {v:.3g}" for k, v in max_lane_rates(ws).items())
        or "none",
        max_ber=ber if ber is not None else "n/a",
        soak_s=round(run.duration_s),
        nic_max_c=run.nic_temp_c.get(rail.node),
        gpu_max_c=run.gpu_temp_c.get(rail.node),
    )
    cable_text = ", ".join(f"{rail.id}<->{p.id}" for p in _peers(fabric, rail)) or rail.id
    where, nodes = rail.id, (rail.node,)
    found: list[Finding] = []
    lines: list[str] = []
    for o in found_lanes:
        text = (
            f"{rail.node} {rail.netdev} receiving on cable {cable_text}: {_seen(o, run.started_s)}"
        )
        if o.level == "warn":
            verdict.warn(f"{text} (lanes in use: {source})", "marginal_cable", objects=cables)
            continue
        lines.append(f"{text}; lanes in use: {source} ({ratio_t.source})")
        short = f"lane {o.lane} at {_rate(o.rate_per_s)} errors/s: {o.why}"
        found.append(Finding(RULES["marginal_cable"], where, nodes, short))
    if grew and not found:
        # The far end of the cable may have seen what this end did not: a hot lane.
        for peer in _peers(fabric, rail):
            pws = tuple(w for w in soak.rail_windows(fabric, peer) if w.error is None)
            for o in _lanes(fabric, peer, run, pws)[0]:
                if o.level == "fail":
                    short = f"lane {o.lane} at {_rate(o.rate_per_s)} errors/s: {o.why}"
                    found.append(Finding(RULES["marginal_cable"], peer.id, (peer.node,), short))
    if grew:
        seen = f"{describe(grew)} during the soak"
        if run.stopped_early:
            seen += f"; the soak stopped early: {run.stopped_early}"
        lines.append(f"{rail.netdev}: {seen}; expected no growth at all")
        found.append(Finding(RULES["post_fec_errors"], where, nodes, describe(grew)))
    if ber is not None and not ber_t.ok(ber):
        seen = f"pre-FEC BER {ber:.3g}"
        lines.append(f"{rail.netdev}: {seen}, {ber_t.describe()}")
        found.append(Finding(RULES["ber_high"], where, nodes, seen))
    verdict(measured="; ".join(lines) or "clean")
    if found:
        witness.fail(verdict, "\n".join(lines), found)


def _last_line(result: RunResult | None) -> str | None:
    """The load's own last words: the line that says why it stopped (gpu-burn rewrites its
    progress with CR, so each CR piece counts as a line)."""
    if result is None:
        return None
    for text in (result.stdout, result.stderr):
        pieces = [p.strip() for p in text.replace("\r", "\n").split("\n") if p.strip()]
        if pieces:
            return pieces[-1]
    return None


def _load_problems(node: Node, fabric: Fabric, run: soak.SoakRun) -> list[str]:
    problems = []
    result = run.load.get(node.name)
    last = _last_line(result)
    said = f"; its last line: {last!r}" if last else ""
    command = result.command if result is not None else fabric.cluster.spec.soak.gpu_load
    fix = (
        f"Fix: run `{command}` on {node.name} by hand until it burns for the whole soak"
        f"{soak.memory_note(command)}, or set soak.gpu_load"
    )
    ended = run.load_ended_s.get(node.name)
    if ended is not None and result is not None and not result.timed_out:
        ended = min(ended, result.duration_s)  # seen ended at a sample; it ran this long
    if ended is not None and ended < run.load_planned_s - LOAD_END_SLACK_S:
        rc = f" (exit status {result.rc})" if result is not None else ""
        problems.append(
            f"{node.name}: the GPU load `{command}` ended after ~{ended:.0f} s of the "
            f"{run.load_planned_s} s planned{rc}{said}. {fix}"
        )
    util = run.gpu_util_pct.get(node.name)
    if util is None:
        # No reading is no proof of load: the soak must not pass by omission.
        problems.append(f"{node.name}: nvidia-smi gave no GPU utilization during the soak")
    elif util < GPU_BUSY_PCT:
        problems.append(
            f"{node.name}: GPU utilization peaked at {util:g}% during the soak, expected >= "
            f"{GPU_BUSY_PCT:g}%{said if ended is None else ''}"
        )
    return problems


def _heat(node: Node, fabric: Fabric, run: soak.SoakRun) -> tuple[list[str], list[str]]:
    """What the temperatures say: limits passed (failures), and what proves less (warnings:
    the NIC hardly warmed from its idle baseline, or its temperature could not be read)."""
    rise_t = fabric.thresholds["nic_rise_min_c"]
    max_t = fabric.thresholds["nic_temp_max_c"]
    hot: list[str] = []
    weak: list[str] = []
    start, peak = run.nic_start_c.get(node.name), run.nic_temp_c.get(node.name)
    netdev = node.rails[0].netdev
    if peak is None:
        weak.append(
            f"{node.name}: no NIC temperature under /sys/class/net/{netdev}/device/hwmon/ during "
            "the soak (mlx5 exposes it from Linux 6.6 on), so the soak cannot show it heated "
            "the NIC"
        )
    elif start is not None and not rise_t.ok(peak - start):
        weak.append(
            f"{node.name}: the NIC warmed only {peak - start:.1f} C from idle ({start:.1f} -> "
            f"{peak:.1f} C) under the load, {rise_t.describe()}: the soak proved less about the "
            "cables when hot. Fix: a GPU load that really burns (soak.gpu_load) and a longer "
            "soak.duration_s"
        )
    if node.name in run.nic_over:
        hot.append(f"{node.name}: NIC {netdev} sensor {run.nic_over[node.name]}")
    elif peak is not None and not max_t.ok(peak):
        hot.append(f"{node.name}: NIC {netdev} reached {peak:.1f} C, {max_t.describe()}")
    module = run.module_temp_c.get(node.name)
    limit = run.module_limit_c.get(node.name)
    if module is not None and limit is not None and module > limit:
        hot.append(
            f"{node.name}: a cable module reached {module:.1f} C, expected <= {limit:g} C "
            "(its own EEPROM's high alarm threshold)"
        )
    if node.name in run.module_alarm:
        hot.append(f"{node.name}: {run.module_alarm[node.name]}")
    return hot, weak


def test_soak_load(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """The soak really loaded the node: the GPU load ran the whole soak and loaded the GPU,
    the node's traffic flowed, the NIC warmed, and no temperature passed its limit."""
    rise_t = fabric.thresholds["nic_rise_min_c"]
    max_t = fabric.thresholds["nic_temp_max_c"]
    verdict(
        node=node.name,
        expected=f"GPU load running (utilization >= {GPU_BUSY_PCT:g}%), each NIC sensor below "
        f"its own temp*_crit (else {max_t.expected()}), NIC rise from idle {rise_t.expected()} "
        "(a warning)",
    )
    run = soak.run(fabric)
    verdict(
        gpu_max_c=run.gpu_temp_c.get(node.name),
        nic_start_c=run.nic_start_c.get(node.name),
        nic_max_c=run.nic_temp_c.get(node.name),
        module_max_c=run.module_temp_c.get(node.name),
        gpu_util_max_pct=run.gpu_util_pct.get(node.name),
        soak_s=round(run.duration_s),
    )
    problems = []
    if node.name in run.idle:
        problems.append(run.idle[node.name])
    if node.name in run.load_error:
        problems.append(run.load_error[node.name])
    problems += _load_problems(node, fabric, run)
    if not run.stopped_early:
        mine = [k for k in run.traffic_error if k.startswith(f"{node.name}:")]
        problems += [f"traffic {k}: {run.traffic_error[k]}" for k in mine]
    hot, weak = _heat(node, fabric, run)
    gap = run.could_not(node.name)
    if gap is not None and not hot:
        raise gap  # a tool missing or a node lost: what the soak did not do says nothing
    rates = [
        f"{k} {v:.1f} Gb/s"
        for k, v in run.traffic.items()
        if v is not None and k.startswith(f"{node.name}:")
    ]
    verdict(measured=", ".join(rates) or "no traffic result")
    if problems:
        witness.fail(
            verdict,
            "the soak did not load this node as planned, so its result proves less:\n"
            + "\n".join(problems + hot + weak),
            witness.findings(fabric, [node.name], only=LOAD_RULES),
        )
    if hot:
        peak = run.nic_temp_c.get(node.name)
        short = f"NIC peaked at {peak:.1f} C during the soak" if peak is not None else "hot"
        found = [Finding(RULES["nic_overheated"], node.name, (node.name,), short)]
        witness.fail(verdict, "the soak's temperatures:\n" + "\n".join(hot + weak), found)
    for line in weak:
        verdict.warn(line)
