"""Host rail counters during traffic (`ethtool -S` and RDMA `hw_counters`, one window per rail per
traffic round in measure/counters.py) and what growth fails (DOMAIN.md §6): post-FEC growth
always; any drop on a lossless rail; drops above `discard_pct` on a lossy one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

from pytest_sparkfabric.measure import counters, qos
from pytest_sparkfabric.measure.engine import QUICK_S, result_error
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import build_ethtool_stats, parse_ethtool_stats
from pytest_sparkfabric.probes.hw_counters import build_hw_counters, parse_hw_counters
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric, PhaseName
    from pytest_sparkfabric.measure.qos import HostQos
    from pytest_sparkfabric.verdict import Verdict

NAME: PhaseName = "rail_counters"
HW = "hw:"
"""Prefix of the RDMA hw_counters in a snapshot (ethtool names stand bare)."""
RX_FRAMES = "rx_packets_phy"
POST_FEC: Mapping[str, RuleId] = {
    "link_down_events_phy": "link_down",
    "rx_pcs_symbol_err_phy": "post_fec_errors",
    "rx_crc_errors_phy": "post_fec_errors",
}
"""Counters that must not grow at all during traffic, and the rule their growth points to."""
Kind = Literal["discard", "sequence", "pause", "congestion"]

# One alternation with a named group per kind: a counter name is matched once, not per kind
# (a few hundred names in each rail's every window).
_KINDS = re.compile(
    r"^(?:(?P<discard>rx_discards_phy|rx_out_of_buffer|rx_prio\d_discards|hw:out_of_buffer)"
    r"|(?P<sequence>hw:(?:out_of_sequence|packet_seq_err|local_ack_timeout_err))"
    r"|(?P<pause>(?:rx|tx)_(?:pause_ctrl_phy|prio\d_pause|global_pause))"
    r"|(?P<congestion>rx_ecn_mark|hw:(?:np_ecn_marked_roce_packets|np_cnp_sent|rp_cnp_handled)))$"
)


def kind_of(name: str) -> Kind | None:
    m = _KINDS.match(name)
    return cast("Kind", m.lastgroup) if m else None


def of_kind(w: counters.Window, kind: Kind) -> dict[str, int]:
    return {k: v for k, v in w.growth.items() if v > 0 and kind_of(k) == kind}


@dataclass(frozen=True, slots=True)
class Finding:
    counter: str
    growth: int
    why: str
    rule: RuleId


def judge(
    w: counters.Window, *, lossless: bool, discard_pct_max: float, post_fec: bool = True
) -> list[Finding]:
    """What in this window's growth fails: any post-FEC growth (`post_fec`); on a lossless rail
    any drop or sequence error; on a lossy one discards above `discard_pct_max` percent of the
    frames received in the window."""
    out = [
        Finding(name, n, "grew during traffic, expected no growth at all", POST_FEC[name])
        for name, n in (w.grown(list(POST_FEC)) if post_fec else {}).items()
    ]
    if lossless:
        for name, n in sorted({**of_kind(w, "discard"), **of_kind(w, "sequence")}.items()):
            why = "grew on a lossless (PFC) configuration, expected 0"
            out.append(Finding(name, n, why, "rx_discards"))
        return out
    frames = w.growth.get(RX_FRAMES)
    for name, n in sorted(of_kind(w, "discard").items()):
        if not frames:
            why = "grew with no received-frame count to compare"
        elif (pct := 100.0 * n / frames) > discard_pct_max:
            why = f"{pct:.3g}% of {frames} frames received, expected <= {discard_pct_max:g}%"
        else:
            continue
        out.append(Finding(name, n, why, "rx_discards"))
    return out


def snapshot(
    t_s: float, stats: Mapping[str, int], hw: Mapping[str, int] | None
) -> counters.Snapshot:
    return counters.Snapshot(t_s, {**stats, **{HW + k: v for k, v in (hw or {}).items()}})


def jobs(rails: Sequence[Rail]) -> list[Job]:
    """`ethtool -S` of each netdev and one hw_counters read per node (to run all at once)."""
    nodes = list(dict.fromkeys(r.node for r in rails))
    out = [Job(r.node, build_ethtool_stats(r.netdev), QUICK_S) for r in rails]
    return out + [
        Job(n, build_hw_counters([r.rdma for r in rails if r.node == n]), QUICK_S) for n in nodes
    ]


def read(fabric: Fabric, rails: Sequence[Rail]) -> dict[str, counters.Snapshot | str]:
    """One snapshot per rail, all read at once."""
    t_s = fabric.transport.clock.now()
    return parse(rails, fabric.run_all(jobs(rails)), t_s)


def parse(
    rails: Sequence[Rail], results: Sequence[RunResult], t_s: float
) -> dict[str, counters.Snapshot | str]:
    """The snapshots in the results of `jobs(rails)`, or why each rail's could not be read."""
    nodes = list(dict.fromkeys(r.node for r in rails))
    hw: dict[str, Mapping[str, int]] = {}
    for n, r in zip(nodes, results[len(rails) :], strict=True):
        try:
            sets = parse_hw_counters(r.stdout).ports if r.ok else ()
        except ParseError:
            sets = ()
        hw.update({f"{n}/{s.device}": s.counters for s in sets if s.device is not None})
    out: dict[str, counters.Snapshot | str] = {}
    for rail, r in zip(rails, results[: len(rails)], strict=True):
        err = result_error(r, "ethtool")
        try:
            out[rail.id] = err or snapshot(
                t_s, parse_ethtool_stats(r.stdout), hw.get(f"{rail.node}/{rail.rdma}")
            )
        except ParseError as exc:
            out[rail.id] = f"{rail.node}: {exc}"
    return out


def measure(fabric: Fabric) -> counters.Log:
    """An empty log: each traffic phase adds its windows (`watch`)."""
    return counters.Log()


def log(fabric: Fabric) -> counters.Log:
    """The session's rail windows so far: each traffic phase adds its own (`watch`)."""
    return fabric.phase(NAME, measure)


def watch(fabric: Fabric, phase: str, rails: Sequence[Rail]) -> counters.Watch:
    """A started watch over `rails`: `step(label)` after each round of traffic."""
    ids = tuple(r.id for r in rails)
    return counters.Watch(log(fabric), phase, ids, lambda: read(fabric, rails)).start()


def totals(windows: Sequence[counters.Window]) -> str:
    sums: dict[str, int] = {}
    for w in windows:
        for kind in ("discard", "sequence", "pause", "congestion"):
            sums[kind] = sums.get(kind, 0) + sum(of_kind(w, kind).values())
        for name in POST_FEC:
            sums[name] = sums.get(name, 0) + w.growth.get(name, 0)
    return ", ".join(f"{k} +{v}" for k, v in sums.items()) or "no counters"


def _lossless(fabric: Fabric, rail: Rail) -> HostQos | None:
    q = qos.rail_qos(fabric, rail).value
    return q if q is not None and q.lossless else None


def _mode(lossless: HostQos | None) -> str:
    return f"lossless ({lossless.describe()})" if lossless else "lossy (PFC off or not read)"


def declare(fabric: Fabric, rail: Rail, verdict: Verdict) -> None:
    """Record where, the mode (lossless or lossy, from the host's own QoS) and the limit."""
    th = fabric.thresholds["discard_pct"]
    lossless = _lossless(fabric, rail)
    drops = (
        "no discard or sequence-error growth"
        if lossless
        else f"discards {th.expected()} of frames received"
    )
    verdict(
        node=rail.node,
        rail=rail.label,
        netdev=rail.netdev,
        expected=f"no {', '.join(POST_FEC)} growth; {drops}",
        source=th.source,
        mode=_mode(lossless),
    )


def check(
    fabric: Fabric, rail: Rail, verdict: Verdict, w: counters.Window, *, post_fec: bool = True
) -> None:
    """Fail the item, naming the counters, when the rail's growth over `w` fails."""
    lossless = _lossless(fabric, rail)
    th = fabric.thresholds["discard_pct"]
    found = judge(w, lossless=lossless is not None, discard_pct_max=th.value, post_fec=post_fec)
    if found:
        text = "; ".join(f"{f.counter} +{f.growth} ({f.why})" for f in found[:3])
        verdict.fail(
            f"{rail.node} {rail.netdev} ({rail.label}), {_mode(lossless)}, during {w.label}: "
            f"{text}",
            found[0].rule,
        )
