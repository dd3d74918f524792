"""Hand-built results documents for the report's tests: any topology and size, healthy or with
faults, every measurement kind the report draws. Figures follow the reference numbers of the
field reports (one rail ~96 Gb/s, loopback ~106, throttled ~13, NCCL ~23 GB/s, healthy lanes a
few corrected bits/s, the failing cable's hot lane ~2.9k/s rising to millions)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any

from pytest_sparkfabric.cluster import initgen, parse_cluster
from pytest_sparkfabric.cluster.plan import plan
from pytest_sparkfabric.cluster.thresholds import defaults
from pytest_sparkfabric.results import Results

Doc = dict[str, Any]
SIZES = [1 << k for k in range(10, 35, 2)]  # 1K .. 16G
HEALTHY_GBPS = 96.0
THROTTLED_GBPS = 13.0
GBPS_80 = (">= 80 Gb/s", "Gb/s")
PART, COPPER = "NJAAKK-N911", "Copper cable"


@dataclass(frozen=True)
class Faults:
    bad_cable: int | None = None  # the cable whose rail 1 runs at 0.3 Gb/s, lane 2 an outlier
    throttled: int | None = None  # the node whose NIC is throttled (it moves ~13 Gb/s)
    unmeasured: bool = False  # the soak of the first cable could not run (not measured)
    hot: int | None = None  # the node whose NIC runs 20 C hotter than the others
    swap_serial: bool = False  # the first two cables' serials exchanged (moved cables)
    hostile: bool = False  # tool output with markup in it (vendor names, a cause, messages)


def document(
    topology: str = "direct",
    n: int = 2,
    faults: Faults | None = None,
    *,
    name: str | None = None,
    soak_minutes: int = 10,
) -> Results:
    f = faults or Faults()
    # The cluster `sparkfabric init` writes: its plan names the rails, cables and (every) node
    # pairs as a run of it does.
    cluster = parse_cluster(initgen.generate(topology, initgen.node_names(str(n)), transport="sim"))
    fabric = plan(cluster)
    nodes = [nd.name for nd in cluster.nodes]
    items: list[Doc] = []
    measurements: list[Doc] = []
    causes: list[Doc] = []
    throttled = nodes[f.throttled] if f.throttled is not None else None
    bad = fabric.cables[f.bad_cable] if f.bad_cable is not None else None
    throttle_items: list[str] = []
    bad_items: list[str] = []

    def item(iid: str, ok: bool | None, **kw: Any) -> str:
        outcome = "not_measured" if ok is None else ("passed" if ok else "failed")
        items.append({"id": iid, "outcome": outcome, **kw})
        return iid

    def figure(iid: str, ok: bool, value: float, expected: str, unit: str, **kw: Any) -> None:
        """An item with its figure; a failed one is explained by the throttled NIC's cause
        unless `blame` names another cause's list."""
        blame = kw.pop("blame", throttle_items)
        item(iid, ok, measured=value, expected=expected, unit=unit, **kw)
        if not ok:
            blame.append(iid)

    def measure(kind: str, value: float, unit: str, objects: list[str], **kw: Any) -> None:
        measurements.append(dict(kind=kind, value=value, unit=unit, objects=objects, **kw))

    for r in cluster.rails:  # loopback per node rail
        v = THROTTLED_GBPS if r.node == throttled else 106.0 - r.index
        at: Doc = {"node": r.node, "rail": r.label, "objects": [r.id]}
        figure(f"test_nic.py::test_loopback[{r.id}]", v >= 80, v, *GBPS_80, **at)
        measure("loopback_gbps", v, "Gb/s", [r.id], node=r.node, rail=r.index)
    for link in (x for pair in fabric.pairs for x in pair.links):  # RDMA per rail, each way
        for src, dst in ((link.a, link.b), (link.b, link.a)):
            s, d, direction = src.node, dst.node, f"{src.id}->{dst.id}"
            v = HEALTHY_GBPS - (sum(map(ord, direction)) % 5) * 0.4
            on_bad = bad and {bad.a_node, bad.b_node} - {None} <= {s, d}  # a switch leg: its node
            v = 0.3 if on_bad and link.rail == 1 else v
            v = round(min(v, THROTTLED_GBPS) if throttled in (s, d) else v, 1)
            low = f"{direction}: {v:.1f} Gb/s, expected >= 80" if v < 80 else None
            at = {"node": s, "rail": f"rail{link.rail}", "objects": [direction], "message": low}
            iid = f"test_bandwidth.py::test_rail_rdma[{direction}]"
            blame = throttle_items if throttled in (s, d) else bad_items
            figure(iid, v >= 80, v, *GBPS_80, **at, blame=blame)
            measure("rdma_gbps", v, "Gb/s", [direction], node=s, peer=d, rail=link.rail)
    peak = 23.5 if throttled is None else 6.0
    figure("test_nccl.py::test_all_reduce", peak >= 19, peak, ">= 19 GB/s", "GB/s", objects=nodes)
    for size in SIZES:
        bw = round(peak * size / (size + (1 << 24)), 3)
        measure("nccl_busbw_gbytes_s", bw, "GB/s", nodes, size_bytes=size, op="all_reduce_perf")
    # Soak: lanes per rail of every cabled node port, temperatures per node.
    cable_rows: list[Doc] = []
    for index, cable in enumerate(fabric.cables):
        a, ap, b, bp, cid = cable.a_node, cable.a_port, cable.b_node, cable.b_port, cable.id
        unmeasured = f.unmeasured and index == 0
        worst_ber = 0.0
        for end, end_port in ((a, ap), (b, bp)) if not unmeasured else ():
            if end is None or not isinstance(end_port, int):
                continue
            for rail in cluster.node(end).rails_of(end_port):
                rid, hot_lane = rail.id, cable == bad and rail.index == 1
                for lane, minute in product(range(4), range(soak_minutes + 1)):
                    flagged = hot_lane and lane == 2 and minute >= soak_minutes // 2
                    rate = float((minute + lane) % 4)
                    rate = 2900.0 * 10 ** (minute - soak_minutes // 2) if flagged else rate
                    at = {"node": end, "rail": rail.index, "lane": lane, "flagged": flagged}
                    t_s = minute * 60.0
                    measure("lane_error_rate_per_s", rate, "errors/s", [rid], t_s=t_s, **at)
                ber = 2.9e-5 if hot_lane else 1.5e-11
                worst_ber = max(worst_ber, ber)
                at = {"node": end, "rail": rail.label, "objects": [rid, cid]}
                iid = f"test_soak.py::test_lanes[{rid}]"
                figure(iid, ber < 2.4e-5, ber, "<= 2.4e-05", "", **at, blame=bad_items)
                measure("ber_max", ber, "", [rid], node=end, rail=rail.index)
        if unmeasured:
            why = "not measured: gpu-burn is not installed on " + a
            item(f"test_soak.py::test_cable[{cid}]", None, objects=[cid], message=why)
        vendor = "<b>Amphenol</b> & co" if f.hostile and index == 0 else "Amphenol"
        serial = f"APF{index + 1:08d}"
        eeprom = {"vendor": vendor, "part": PART, "serial": serial, "length_m": 1.0, "type": COPPER}
        end_a = {**eeprom, "node": a, "port": ap, "speed_mbps": 200000, "fec": "RS"}
        end_b = {**(eeprom if b else {}), "node": b, "port": bp, "speed_mbps": 200000}
        status = "fail" if cable == bad else ("not_measured" if unmeasured else "pass")
        end_b["fec"] = "RS" if b else "fec91"
        worst = None if unmeasured else worst_ber
        cable_rows.append({"id": cid, "a": end_a, "b": end_b, "status": status, "worst_ber": worst})
    if f.swap_serial and len(cable_rows) > 1:
        first, second = cable_rows[0], cable_rows[1]
        for end in ("a", "b"):
            s1, s2 = first[end].get("serial"), second[end].get("serial")
            if s1 and s2:
                first[end]["serial"], second[end]["serial"] = s2, s1
    temps = (("nic_temp_c", 62.0), ("gpu_temp_c", 70.0))
    for (i, node), (kind, base), minute in product(
        enumerate(nodes), temps, range(soak_minutes + 1)
    ):
        hotter = 20 if f.hot == i and kind == "nic_temp_c" else 0
        v = base + min(minute, 6) * 1.5 + (i % 3) * 0.7 + hotter
        measure(kind, round(v, 1), "C", [node], node=node, t_s=minute * 60.0)
    if bad:
        why = "one lane of the cable logs far more errors than the others: a marginal cable"
        rule, markup = (
            ("<rule&>", " <script>alert(1)</script>") if f.hostile else ("lane_outlier", "")
        )
        seen = ["lane 2 rose from 2.9k to millions of corrected bits/s under load"]
        fix = "replace the cable before it drops the link"
        causes.append({"rule": rule, "cause": why + markup, "fix": fix, "evidence": seen,
                       "objects": [bad.id], "items": bad_items})  # fmt: skip
    if throttled:
        why = "the NIC is throttled: ~13 Gb/s even in loopback while the link says 200G"
        fix = "reboot both boxes with the cables attached; if it persists, unplug power for 60 s"
        causes.append({"rule": "nic_throttled", "cause": why, "fix": fix,
                       "objects": [throttled], "items": throttle_items})  # fmt: skip
    outcomes = {i["outcome"] for i in items}
    verdict = "incomplete" if "not_measured" in outcomes else "accepted"
    about = {
        "name": name or f"{topology}-{n}",
        "path": f"examples/{topology}-{n}.yaml",
        "topology": topology,
        "transport": "sim",
        "nodes": [{"name": nd.name, "ports": list(nd.ports)} for nd in cluster.nodes],
        "switch": "192.168.88.1" if topology == "switch" else None,
    }
    limits = {
        t.name: {"value": t.value, "kind": t.kind, "unit": t.unit, "source": t.source}
        for t in defaults(topology, n).values()
    }
    return Results.model_validate(
        {
            "verdict": "rejected" if "failed" in outcomes else verdict,
            "cluster": about,
            "started": "2025-06-01T10:00:00+00:00",
            "duration_s": 724.0,
            "causes": causes,
            "items": items,
            "measurements": measurements,
            "cables": cable_rows,
            "phases": [
                {"name": "config", "rounds": None, "real_s": 4.2, "transport_s": 3.9},
                {"name": "bandwidth", "rounds": 3, "real_s": 41.0, "transport_s": 36.0},
                {"name": "soak", "rounds": None, "real_s": 12.5, "transport_s": 600.0},
            ],
            "thresholds": limits,
        }
    )


def edit(doc: Results, **changes: Any) -> Results:
    """The document with top-level fields replaced, validated as a reader would."""
    return Results.model_validate(doc.model_dump() | changes)


def plus_items(doc: Results, *items: Doc) -> Results:
    return edit(doc, items=[*doc.model_dump()["items"], *items])
