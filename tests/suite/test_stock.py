"""A stock DGX OS node (`simulate.profile: stock`: no perftest, iperf3, lldpd, gpu-burn, Open MPI
or nccl-tests; a sudo that asks for a password) on every topology: the run says what to install,
never that the fabric is bad (issue 24); its preflight comes first, in the results document."""

from __future__ import annotations

import pytest

from tests.suite.runner import SHORT_SOAK, run_suite, write_cluster

INCOMPLETE = 10
STOCK = {"profile": "stock"}
PREREQUISITES = {
    "perftest missing": "sudo apt install perftest",
    "iperf3 missing": "sudo apt install iperf3",
    "Open MPI missing": "sudo apt-get install -y libopenmpi-dev openmpi-bin",
    "gpu-burn missing": "git clone https://github.com/wilicc/gpu-burn ~/gpu-burn",
}


# direct-2 is examples/stock.yaml, pinned by the fault matrix.
@pytest.mark.parametrize("base", ["ring-4.yaml", "switch-8.yaml"])
def test_a_stock_cluster_is_incomplete_with_one_cause_per_prerequisite(
    pytester: pytest.Pytester, base: str
) -> None:
    changes = {"simulate": STOCK, **SHORT_SOAK}
    run = run_suite(pytester, write_cluster(pytester.path, base, changes=changes), "-p", "no:html")
    assert (run.ret, run.doc["verdict"]) == (INCOMPLETE, "incomplete")
    assert [i["id"] for i in run.doc["items"] if i["outcome"] == "failed"] == []
    causes = {c["cause"]: c for c in run.doc["causes"]}
    assert sorted(causes) == sorted(PREREQUISITES)
    for text, fix in PREREQUISITES.items():
        assert causes[text]["rule"] == "prerequisite_missing"
        assert causes[text]["fix"].startswith(fix), causes[text]["fix"]
    unmeasured = [i for i in run.doc["items"] if i["outcome"] == "not_measured"]
    assert unmeasured and all("Fix: " in (i["message"] or "") for i in unmeasured)
    # The cable EEPROM is advisory: `sudo -n ethtool -m` refused is a warning, never a block.
    eeprom = {i["outcome"] for i in run.doc["items"] if "test_cable_eeprom[" in i["id"]}
    assert eeprom == {"warned"}


IPERF3 = "iperf3: command not found (iperf3 is not installed, or not on PATH)"


def test_a_stock_cluster_preflight_is_in_the_results_and_not_measures_tcp(
    pytester: pytest.Pytester,
) -> None:
    cluster = write_cluster(pytester.path, "direct-2.yaml", changes={"simulate": STOCK})
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
    causes = [(c["rule"], c["cause"], c["objects"]) for c in run.doc["causes"]]
    assert causes == [("prerequisite_missing", "iperf3 missing", ["spark-1", "spark-2"])]
    assert run.doc["verdict"] == "incomplete" and run.ret == INCOMPLETE
