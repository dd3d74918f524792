"""Root causes built from a run's items: one per fault, every failed item in exactly one."""

from __future__ import annotations

from typing import Any

from pytest_sparkfabric.report.causes import session_causes


def _item(item_id: str, outcome: str, *objects: str, rule: str | None = None, **kw: Any) -> Any:
    props = {"rule": rule, "fix": f"fix of {rule}"} if rule else {}
    return {
        "id": item_id,
        "outcome": outcome,
        "objects": list(objects),
        "rule": rule,
        "properties": props,
        "node": kw.get("node"),
        "message": kw.get("message"),
    }


def test_traffic_symptoms_fold_into_the_state_check_that_names_the_node() -> None:
    items = [
        _item(
            "test_mtu.py::test_mtu[spark-2:rail0]",
            "failed",
            "spark-2:rail0",
            rule="mtu_mismatch",
            node="spark-2",
        ),
        _item(
            "test_mtu.py::test_jumbo_ping[a]",
            "failed",
            "spark-1:rail0->spark-2:rail0",
            rule="mtu_path",
        ),
        _item(
            "test_mtu.py::test_jumbo_ping[b]",
            "failed",
            "spark-2:rail0->spark-1:rail0",
            rule="mtu_local",
        ),
        _item("test_mtu.py::test_mtu[spark-1:rail0]", "passed", "spark-1:rail0"),
    ]
    (cause,) = session_causes(None, items)
    assert cause["rule"] == "mtu_mismatch"
    assert cause["objects"] == ["spark-2"]
    assert cause["fix"] == "fix of mtu_mismatch"
    assert sorted(cause["items"]) == sorted(i["id"] for i in items[:3])


def test_unmeasured_items_are_one_cause_per_node_with_the_common_reason() -> None:
    down = "not measured: spark-2: ssh: connection timed out after 10 s"
    items = [
        _item("t.py::a", "not_measured", "spark-2", message=down),
        _item("t.py::b", "not_measured", "spark-2:rail0", message=down),
        _item(
            "t.py::c",
            "not_measured",
            message="not measured: NCCL needs all 2 nodes; "
            "spark-2: ssh: connection timed out after 10 s",
        ),
    ]
    (cause,) = session_causes(None, items)
    assert cause["rule"] == "not_measured"
    assert cause["objects"] == ["spark-2"]
    assert cause["cause"] == "could not measure: spark-2: ssh: connection timed out after 10 s"
    assert cause["items"] == ["t.py::a", "t.py::b", "t.py::c"]
    assert cause["evidence"] == [
        "NCCL needs all 2 nodes; spark-2: ssh: connection timed out after 10 s"
    ]


def test_a_failure_with_no_signature_and_no_cause_nearby_stays_unexplained() -> None:
    items = [
        _item("test_bandwidth.py::test_rail_rdma[x]", "failed", "spark-1:rail0<->spark-2:rail0"),
        _item(
            "test_addressing.py::test_rp_filter[spark-3:rail0]",
            "failed",
            "spark-3:rail0",
            rule="rp_filter_strict",
        ),
    ]
    (cause,) = session_causes(None, items)
    assert cause["rule"] == "rp_filter_strict" and cause["objects"] == ["spark-3"]
    assert "test_bandwidth.py::test_rail_rdma[x]" not in cause["items"]


def test_a_healthy_run_has_no_causes() -> None:
    assert session_causes(None, [_item("t.py::a", "passed"), _item("t.py::b", "skipped")]) == []
