"""The preflight in a whole run: first, in the results document, and the reason of every item
whose tool is missing."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

IPERF3 = "iperf3: command not found (iperf3 is not installed, or not on PATH)"


def test_a_stock_cluster_preflight_is_in_the_results_and_not_measures_tcp(
    pytester: pytest.Pytester,
) -> None:
    cluster = write_cluster(
        pytester.path, "direct-2.yaml", changes={"simulate": {"profile": "stock"}}
    )
    run = run_suite(pytester, cluster, "-p", "no:html", "-q", markers="tcp or addressing")
    nodes = {n["node"]: n for n in run.doc["preflight"]}
    assert sorted(nodes) == ["spark-1", "spark-2"]
    # Only what the selected checks run is looked for.
    assert nodes["spark-1"]["looked_for"] == ["ip", "iperf3"]
    assert [g["reason"] for g in nodes["spark-2"]["missing"]] == [f"spark-2: {IPERF3}"]
    items = {i["id"]: i for i in run.doc["items"]}
    tcp = items["test_tcp.py::test_pair_tcp[spark-1<->spark-2]"]
    assert (tcp["outcome"], tcp["rule"]) == ("not_measured", "prerequisite_missing")
    assert tcp["message"] == (
        f"not measured: spark-1: {IPERF3}; spark-2: {IPERF3}\nFix: sudo apt install iperf3"
    )
    assert [(c["rule"], c["cause"], c["objects"]) for c in run.causes] == [
        ("prerequisite_missing", "iperf3 missing", ["spark-1", "spark-2"])
    ]
    assert run.doc["verdict"] == "incomplete" and run.ret == 10
