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
from pytest_sparkfabric.measure.soak_math import (
    DEFAULT_SPEED_MBPS,
    LaneOutlier,
    active_lanes,
    cable_form,
    growth,
    has_lane_counters,
    lane_outliers,
    max_ber,
    max_lane_rates,
    windows,
)

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Rail, Verdict
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.transport import RunResult

pytestmark = pytest.mark.soak

GPU_BUSY_PCT = soak.GPU_BUSY_PCT
LOAD_RULES: tuple[RuleId, ...] = ("link_down", "half_port", "nic_throttled")
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


def _rate(per_s: float) -> str:
    return f"{per_s:.3g}" if per_s < 1000 else f"{per_s:,.0f}"


def _times(o: LaneOutlier) -> str:
    if o.median_others_per_s <= 0:
        return "the other lanes log nothing"
    return f"~{o.rate_per_s / o.median_others_per_s:,.0f}x its neighbours"


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
        cables=",".join(o.id for o in witness.cable(fabric, rail) if o.kind == "cable"),
    )
    run = soak.run(fabric)
    samples = soak.rail_samples(fabric, rail)
    if len(samples) < 2:
        errors = run.read_errors.get(rail.id, ["no reading"])
        verdict.not_measured(
            f"{rail.id}: {len(samples)} ethtool -S reading(s) during the soak; {errors[-1]}",
            nodes=[rail.node],
        )
    eth = links.ethtool(fabric, rail).value
    ws = windows(samples, eth.speed_mbps if eth is not None else None)
    if not has_lane_counters(samples):
        grew_first = growth(ws)
        seen = f"; meanwhile {grew_first.describe()}" if grew_first else ""
        verdict.not_measured(
            f"{rail.netdev} exposes no rx_err_lane_*_phy counters ({rail.id}), so no lane of "
            f"its cable can be judged during the soak{seen}",
            nodes=[rail.node],
            missing="per-lane PHY error counters",
            fix="a driver and firmware that export the per-lane PHY counters (mlx5: the per-lane "
            f"error counter capability; `ethtool -S {rail.netdev} | grep rx_err_lane` must list "
            "them)",
        )
    in_use = active_lanes(
        # A link the soak dropped reads "Speed: Unknown!" afterwards: the Spark's line rate.
        speed_mbps=(eth.speed_mbps if eth is not None else None) or DEFAULT_SPEED_MBPS,
        lanes_reported=eth.lanes if eth is not None else None,
        form=cable_form(fabric.cluster.topology),
    )
    rates = max_lane_rates(ws)
    ber = max_ber(ws)
    verdict(
        lanes_in_use=",".join(str(lane) for lane in in_use),
        lane_rates_per_s=", ".join(f"lane{k} {v:.3g}" for k, v in rates.items()) or "none",
        max_ber=ber if ber is not None else "n/a",
        bits_estimated=any(w.bits_estimated for w in ws),
        soak_s=round(run.duration_s),
        nic_max_c=run.nic_temp_c.get(rail.node),
        gpu_max_c=run.gpu_temp_c.get(rail.node),
    )
    outliers = lane_outliers(ws, ratio_max=ratio_t.value, floor_per_s=floor_t.value, lanes=in_use)
    grew = growth(ws)
    cable = ", ".join(f"{rail.id}<->{p.id}" for p in _peers(fabric, rail)) or rail.id
    where, nodes = rail.id, (rail.node,)
    found: list[Finding] = []
    lines: list[str] = []
    for o in outliers:
        seen = (
            f"lane {o.lane} at {_rate(o.rate_per_s)} errors/s while the other lanes in use "
            f"log {_rate(o.median_others_per_s)}/s (median), {_times(o)}, "
            f"{o.start:.0f}-{o.end:.0f} s into the soak"
        )
        if o.worst_ratio > o.ratio:
            seen += f", worst {_rate(o.worst_rate_per_s)}/s"
        limit = ratio_t.value * max(o.median_others_per_s, floor_t.value)
        lines.append(
            f"{rail.node} {rail.netdev} receiving on cable {cable}: {seen}; limit "
            f"{_rate(limit)}/s = lane_ratio_max {ratio_t.value:g} x max(that median, "
            f"lane_floor_per_s {floor_t.value:g}/s) ({ratio_t.source}; {floor_t.source})"
        )
        short = (
            f"lane {o.lane} at {_rate(o.rate_per_s)} errors/s, {_times(o)}, "
            f"{o.start:.0f} s into the soak"
        )
        found.append(Finding(RULES["marginal_cable"], where, nodes, short))
    if grew and not outliers:
        # The far end of the cable may have seen what this end did not: a hot lane.
        for peer in _peers(fabric, rail):
            pws = windows(soak.rail_samples(fabric, peer))
            peer_lanes = lane_outliers(
                pws, ratio_max=ratio_t.value, floor_per_s=floor_t.value, lanes=in_use
            )
            for o in peer_lanes:
                short = (
                    f"lane {o.lane} at {_rate(o.rate_per_s)} errors/s, {_times(o)}, "
                    f"{o.start:.0f} s into the soak"
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
        f"Fix: run `{command}` on {node.name} by hand until it burns for the whole soak "
        "(gpu-burn reads `-m 80` as 80 MB and aborts; write `-m 80%`), or set soak.gpu_load"
    )
    if result is not None and result.rc == 127:
        problems.append(
            f"{node.name}: the GPU load `{result.command}` was not found (soak.gpu_load)"
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


def _heat_problems(node: Node, fabric: Fabric, run: soak.SoakRun) -> tuple[list[str], bool]:
    """What the temperatures say: the NIC never warmed (the soak proved nothing), or some
    temperature passed its limit (the second value: a limit was passed)."""
    rise_t = fabric.thresholds["nic_rise_min_c"]
    max_t = fabric.thresholds["nic_temp_max_c"]
    problems: list[str] = []
    hot = False
    start, peak = run.nic_start_c.get(node.name), run.nic_temp_c.get(node.name)
    netdev = node.rails[0].netdev
    if peak is None:
        problems.append(
            f"not measured: {node.name}: no NIC temperature under "
            f"/sys/class/net/{netdev}/device/hwmon/ during the soak (mlx5 exposes it from "
            "Linux 6.6 on), so the soak cannot show it heated the NIC"
        )
    elif start is not None and not rise_t.ok(peak - start):
        problems.append(
            f"{node.name}: the NIC warmed only {peak - start:.1f} C ({start:.1f} -> {peak:.1f} C) "
            f"under the load, {rise_t.describe()}: the soak proved nothing about the cables "
            "when hot. Fix: a GPU load that really burns (soak.gpu_load) and a longer "
            "soak.duration_s"
        )
    if peak is not None and not max_t.ok(peak):
        hot = True
        problems.append(f"{node.name}: NIC {netdev} reached {peak:.1f} C, {max_t.describe()}")
    module = run.module_temp_c.get(node.name)
    limit = run.module_limit_c.get(node.name)
    if module is not None and limit is not None and module > limit:
        hot = True
        problems.append(
            f"{node.name}: a cable module reached {module:.1f} C, expected <= {limit:g} C "
            "(its own EEPROM's high alarm threshold)"
        )
    if node.name in run.module_alarm:
        hot = True
        problems.append(f"{node.name}: {run.module_alarm[node.name]}")
    return problems, hot


def test_soak_load(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """The soak really loaded the node: the GPU load ran the whole soak and loaded the GPU,
    the node's traffic flowed, the NIC warmed, and no temperature passed its limit."""
    rise_t = fabric.thresholds["nic_rise_min_c"]
    max_t = fabric.thresholds["nic_temp_max_c"]
    verdict(
        node=node.name,
        expected=f"GPU load running (utilization >= {GPU_BUSY_PCT:g}%), NIC rise "
        f"{rise_t.expected()}, NIC {max_t.expected()}",
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
    heat, hot = _heat_problems(node, fabric, run)
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
            + "\n".join(problems + heat),
            witness.findings(fabric, [node.name], only=LOAD_RULES),
        )
    if heat:
        peak = run.nic_temp_c.get(node.name)
        short = f"NIC peaked at {peak:.1f} C during the soak" if peak is not None else "hot"
        found = [Finding(RULES["nic_overheated"], node.name, (node.name,), short)] if hot else []
        witness.fail(verdict, "the soak's temperatures:\n" + "\n".join(heat), found)
