"""The switch while traffic flows (DOMAIN.md §7): each node's leg keeps its error, drop and pause
counters flat across every bandwidth round and the heat soak, and the switch CPU stays idle
while fabric traffic crosses it (a busy CPU forwards in software).

Both read the windows `measure.counters` kept around the traffic; the RDMA rounds run
first if they have not (the soak and TCP rounds count when they ran before these items)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.diagnosis.evidence import SWITCH_CPU_BUSY_PCT
from pytest_sparkfabric.measure import counters, rdma
from pytest_sparkfabric.measure import switch as switch_reads
from pytest_sparkfabric.measure.soak import SoakRun

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Verdict
    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.measure.counters import Growth, SwitchLog

pytestmark = [pytest.mark.bandwidth, pytest.mark.sparkfabric_needs("ib_write_bw")]


def _could_not_run(fabric: Fabric) -> None:
    """Raise why no traffic crossed the switch where the tool could not run (perftest missing,
    a node lost): then the switch was never put under load, which says nothing about it."""
    for r in rdma.pair_runs(fabric).directed().values():
        if r.unmeasured is not None:
            raise r.unmeasured


def _log(fabric: Fabric, where: str, verdict: Verdict) -> SwitchLog:
    rdma.pair_runs(fabric)
    log = counters.switch_log(fabric)
    if not log.by_object:
        _could_not_run(fabric)
        why = log.not_watched or "no traffic round crossed the switch"
        verdict.fail(f"{where}: not measured: {why}", measured="not measured")
    return log


def _host_side(fabric: Fabric, node: Node) -> str:
    """The other direction of the same cable: the node's own receive errors over the soak."""
    if fabric.measured("soak", SoakRun) is None:
        return "host side (switch->host) not measured: the heat soak did not run"
    parts = []
    for rail in node.rails:
        ws = [w for w in counters.rail_log(fabric).of(rail.id, "soak") if w.error is None]
        for name in ("rx_crc_errors_phy", "rx_pcs_symbol_err_phy"):
            if ws and all(name in w.growth for w in ws):
                parts.append(f"{rail.netdev} {name} +{sum(w.growth[name] for w in ws)}")
    if not parts:
        return "host side (switch->host) not measured: no ethtool -S samples of the soak"
    return "host side (switch->host, over the soak): " + ", ".join(parts)


def _growth_text(g: Growth) -> str:
    windows = ", ".join(f"{label} +{n}" for label, n in g.by_window)
    return f"{g.counter.name} +{g.total} ({windows})"


def test_switch_leg_counters(
    node: Node, switch: SwitchSpec, fabric: Fabric, verdict: Verdict
) -> None:
    """The node's leg: no FCS error, uncorrected FEC codeword, drop or pause frame added while
    traffic flowed, in any bandwidth round or the soak."""
    leg = switch.ports[node.name]
    port = node.ports[0] if node.ports else 0
    cable = f"{node.name} port {port} <-> switch {switch.host} {leg}"
    expected = "no " + ", ".join(c.name for c in counters.WATCHED) + " growth"
    verdict(node=node.name, rail=f"switch {leg}", expected=expected, switch_leg=leg, cable=cable)
    where = f"{node.name}: switch {switch.host} port {leg}"
    windows = _log(fabric, where, verdict).of(leg)
    seen = [w for w in windows if counters.unread(w) is None]
    if not seen:
        why = next((y for w in windows if (y := counters.unread(w))), "not read")
        verdict.fail(f"{where}: counters not measured during traffic: {why}", measured=why)
    grew = counters.leg_growth(seen)
    corrected = sum(w.growth.get("rs-fec-corrected", 0) for w in seen)
    info = f"; rs-fec-corrected +{corrected} (FEC at work; not an error)" if corrected else ""
    verdict(
        measured=(", ".join(_growth_text(g) for g in grew) or "no growth")
        + f" over {len(seen)} traffic window(s){info}"
    )
    if not grew:
        return
    first = grew[0]
    direction = first.counter.direction
    rule = next((g.counter.rule for g in grew if g.counter.rule), None)
    meaning = "; ".join(dict.fromkeys(g.counter.meaning for g in grew))
    blame = ""
    if direction == "host->switch" and first.counter.rule == "post_fec_errors":
        blame = (
            f"\n    Blamed on: the host->switch direction of the cable {cable} (the host's "
            f"transmitter, the cable, or the switch port's receiver); "
            f"{_host_side(fabric, node)}"
        )
    verdict(
        direction=direction,
        counter=first.counter.name,
        objects=f"switch leg {leg}; cable {cable}; direction {direction}",
    )
    verdict.fail(
        f"{where}: {', '.join(_growth_text(g) for g in grew)} during traffic: {meaning}; "
        f"expected {expected}{blame}",
        rule,
    )


def _offload_evidence(fabric: Fabric, switch: SwitchSpec) -> str:
    state = switch_reads.state(fabric).value
    ports = state.bridge_ports.value if state is not None else None
    if ports is None:
        return "bridge ports not read"
    legs = set(switch.ports.values())
    bridges = sorted({p.bridge or "?" for p in ports if p.interface in legs})
    off = [p.interface or "?" for p in ports if p.hw_offload is not True]
    extra = sorted(p.interface or "?" for p in ports if p.interface not in legs)
    return (
        f"bridges holding the legs: {', '.join(bridges) or 'none'}; hw-offload off on: "
        f"{', '.join(off) or 'none'}; other ports in the bridge: {', '.join(extra) or 'none'}"
    )


def test_switch_cpu_under_traffic(switch: SwitchSpec, fabric: Fabric, verdict: Verdict) -> None:
    """The switch CPU stays below the software-forwarding level while fabric traffic crosses
    the switch (cpu-load sampled every few seconds during each round)."""
    expected = f"cpu-load < {SWITCH_CPU_BUSY_PCT:g}% while traffic flows"
    verdict(rail=f"switch {switch.host}", expected=expected)
    where = f"switch {switch.host}"
    cpu = _log(fabric, where, verdict).cpu
    samples = [s for s in cpu if s.load_pct is not None]
    if not samples:
        _could_not_run(fabric)
        errors = [s.error for s in cpu if s.error]
        why = errors[0] if errors else "no round lasted a sampling interval"
        verdict.fail(
            f"{where}: cpu-load not measured during traffic: {why}", measured="not measured"
        )
    peak = max(samples, key=lambda s: s.load_pct or 0)
    load = peak.load_pct or 0
    verdict(
        measured=f"peak cpu-load {load}% ({peak.label}, {peak.at_s:.0f} s in; "
        f"{len(samples)} samples during traffic)",
        cpu_load_pct=load,
    )
    if load >= SWITCH_CPU_BUSY_PCT:
        verdict.fail(
            f"{where}: cpu-load {load}% during {peak.label} ({peak.at_s:.0f} s in) while "
            f"fabric traffic crossed the switch: it forwards in software (~10 Gb/s ceilings); "
            f"{_offload_evidence(fabric, switch)}; expected {expected}",
            "switch_cpu_forwarding",
        )
