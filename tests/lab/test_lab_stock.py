"""A prerequisite gone for real (issue 24): a node's shell that does not find a tool, and a node
that dies in the bandwidth phase. Each leaves its checks not measured with one cause, blames no
hardware, measures what the other node can, and leaves no process behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lab import labkit
from tests.suite.runner import SuiteRun

pytestmark = labkit.lab_marks()
S2 = "spark-2"
FAULTS = ("tool_missing", "node_lost")
# RDMA bandwidth without the latency item (ib_write_lat is not what either fault takes away).
SELECTION = ["-m", "bandwidth", "-k", "not latency"]
Run = tuple[labkit.Lab, SuiteRun, dict[str, list[str]]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    def go(fault: str, lab: labkit.Lab) -> Run:
        out = tmp_path_factory.mktemp(f"run-{fault}")
        return lab, labkit.run_suite(lab.cluster_yaml, out, SELECTION), labkit.strays_after(lab)

    paths = {
        f: labkit.cluster_file(tmp_path_factory.mktemp(f), "direct-2",
                               faults=[{"fault": f, "command": "ib_write_bw", "node": S2}])
        for f in FAULTS
    }  # fmt: skip
    with labkit.labs_running(paths, go, 2) as runs:
        yield runs


@pytest.mark.parametrize("fault", FAULTS)
def test_spark2_is_not_measured_with_one_cause_and_spark1_is_measured(
    runs: dict[str, Run], fault: str
) -> None:
    lab, run, strays = runs[fault]
    # The document's own outcomes (the SuiteRun's count not measured as failed).
    outcomes = {it["id"].split("::", 1)[-1]: it["outcome"] for it in run.doc["items"]}
    assert "failed" not in outcomes.values(), run.failures()
    assert run.doc["verdict"] == "incomplete"
    about = {v for k, v in outcomes.items() if S2 in k.split("[", 1)[-1]}
    assert about == {"not_measured"}, outcomes
    loopback = {v for k, v in outcomes.items() if k.startswith("test_nic_loopback[spark-1")}
    assert loopback == {"passed"}, outcomes
    (cause,) = run.doc["causes"]
    assert strays == {}
    if fault == "tool_missing":
        # The node's own shell does not find it: no wrapper, nothing on its PATH.
        path = f"PATH={lab.dir}/bin/{S2}:$PATH"
        r = lab.in_node(S2, ["sh", "-c", f"{path} command -v ib_write_bw"])
        assert r.returncode != 0 and r.stdout == ""
        assert "spark-2: ib_write_bw: command not found" in run.stdout
        assert "sudo apt install perftest" in run.stdout
        assert cause["rule"] == "prerequisite_missing", cause
    else:
        assert cause["rule"] == "node_unreachable", cause
        assert "NIC" not in run.stdout.split("root cause", 1)[-1]
        # The node is gone for good: its sshd ended with it.
        assert lab.ssh_error(S2) == f"{S2}: ssh: connection refused"
