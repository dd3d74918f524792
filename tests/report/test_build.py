"""A results document read into the picture's model and the charts' data: worst status per
drawn object, collateral failures, root-cause marks, tooltips, matrices and series."""

from __future__ import annotations

from pytest_sparkfabric.report.build import cable_rows, picture
from pytest_sparkfabric.report.charts import hot_nodes, lanes, matrices, temps
from tests.report.sample import Faults, document, edit, plus_items


def test_failures_are_collateral_when_a_cause_elsewhere_explains_them_else_blamed_here() -> None:
    doc = document("mesh", 3, Faults(throttled=0))
    r = picture(doc)
    # spark-1's NIC is throttled: its cables fail because of it (its node: test_picture).
    touching = r.cables[0]
    assert touching.id == "spark-1:p0<->spark-2:p1"
    assert touching.status == "fail" and touching.elsewhere and touching.causes == ()
    # The inventory keeps the cable's own verdict: a vendor must not see it as failed.
    assert cable_rows(doc, r)[0][1] == "pass"
    cable = picture(edit(document("direct", 2, Faults(bad_cable=0)), causes=[])).cables[0]
    assert cable.status == "fail" and not cable.elsewhere
    assert next(x for x in cable.rails if x.rail == 1).elsewhere is False


def test_switch_path_reaches_both_legs() -> None:
    pair = "spark-1:rail1->spark-3:rail1"
    item = {"id": f"test_x.py::test_pair[{pair}]", "outcome": "not_measured", "objects": [pair]}
    doc = plus_items(document("switch", 3), item)
    legs = {c.a.node: c for c in picture(edit(doc, verdict="incomplete")).cables}
    for node in ("spark-1", "spark-3"):
        assert legs[node].status == "not_measured"
        assert next(x for x in legs[node].rails if x.rail == 1).status == "not_measured"
    assert legs["spark-2"].status == "pass"


def test_an_item_without_objects_counts_for_its_node() -> None:
    doc = plus_items(document("direct", 2), {"id": "t::x", "outcome": "failed", "node": "spark-2"})
    assert [n.status for n in picture(doc).nodes] == ["pass", "fail"]


def test_tooltips_summarise_series_by_their_peak_and_cap_long_lists() -> None:
    r = picture(document("switch", 12))
    node = r.nodes[0]
    assert node.notes[:2] == ("peak NIC temperature: 71 C", "peak GPU temperature: 79 C")
    assert "NCCL busbw all_reduce_perf at 16GB: 187.8 Gb/s" in node.notes
    assert "loopback: 106 Gb/s" in node.notes
    leg = r.cables[0]
    assert "worst lane rate: 3 corrected bits/s" in leg.rails[0].notes
    # All pairs of 8 nodes: 14 transfers cross each leg on each rail; the tooltip keeps 11.
    rail = picture(document("switch", 8)).cables[0].rails[0]
    assert len(rail.notes) == 12
    assert rail.notes[-1] == "... and 5 more"


def test_soak_series_mark_flagged_lanes_and_hot_nodes() -> None:
    doc = document("ring", 4, Faults(bad_cable=2, hot=3))
    loud = [s.name for s in lanes(doc) if s.outlier]
    assert loud == ["spark-3:p0rail1 lane 2", "spark-4:p1rail1 lane 2"]
    assert [s.name for s in temps(doc, "nic_temp_c") if s.outlier] == ["spark-4"]
    assert not [s.name for s in temps(doc, "gpu_temp_c") if s.outlier]


def test_hot_nodes_needs_three_and_a_margin_and_no_measurements_no_series() -> None:
    assert hot_nodes({"a": 60, "b": 90}) == set()
    assert hot_nodes({"a": 60, "b": 61, "c": 70.6}) == {"c"}
    assert hot_nodes({"a": 60, "b": 61, "c": 70.5}) == set()
    doc = edit(document("direct", 2), measurements=[])
    assert (lanes(doc), temps(doc, "nic_temp_c"), matrices(doc)) == ([], [], [])


def test_a_cable_a_cause_blames_fails_though_only_its_rails_were_checked() -> None:
    doc = document("direct", 2)
    (cable,) = doc.cables
    item = {"id": "t::soak[spark-2:rail0]", "outcome": "failed", "objects": ["spark-2:rail0"]}
    cause: dict[str, object] = {"rule": "marginal_cable", "cause": "a marginal cable"}
    cause |= {"fix": "replace the cable", "objects": [cable.id], "items": [item["id"]]}
    doc = edit(plus_items(doc, item), causes=[cause], verdict="rejected")
    drawn = picture(doc).cables[0]
    assert drawn.status == "fail" and drawn.causes == (1,) and not drawn.elsewhere
    assert {r.status for r in drawn.rails} == {"fail"}
    assert cable_rows(doc) == [(doc.cables[0], "fail")]
    # A possible cause blames nothing.
    unsure = edit(doc, causes=[cause | {"certain": False}], verdict="rejected")
    assert cable_rows(unsure) == [(unsure.cables[0], "pass")]
