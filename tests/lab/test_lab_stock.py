"""A prerequisite gone for real (issue 24): a node's shell that does not find a tool, and a node
that dies in the bandwidth phase. Each leaves its checks not measured with one cause, blames no
hardware, measures what the other node can, and leaves no process behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric.transport import Job
from tests.lab import labkit

pytestmark = labkit.lab_marks()
S1, S2 = "spark-1", "spark-2"
FAULTS: dict[str, dict[str, Any]] = {
    "tool_missing": {"fault": "tool_missing", "command": "ib_write_bw", "node": S2},
    "node_lost": {"fault": "node_lost", "command": "ib_write_bw", "node": S2},
}
# RDMA bandwidth without the latency item (ib_write_lat is not what either fault takes away).
SELECTION = ["-m", "bandwidth", "-k", "not latency"]


@dataclass
class Run:
    lab: labkit.Lab
    suite: labkit.SuiteRun
    document: dict[str, Any]
    strays: dict[str, list[str]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    with ExitStack() as stack:
        labs = {
            name: stack.enter_context(
                labkit.lab_of(
                    labkit.cluster_file(tmp_path_factory.mktemp(name), "direct-2", faults=[f])
                )
            )
            for name, f in FAULTS.items()
        }

        def go(name: str) -> Run:
            out = tmp_path_factory.mktemp(f"run-{name}")
            suite = labkit.run_suite(labs[name].cluster_yaml, out, SELECTION)
            document = json.loads((out / "results.json").read_text())
            return Run(labs[name], suite, document, labkit.strays_after(labs[name]))

        with ThreadPoolExecutor(2) as pool:
            yield dict(zip(FAULTS, pool.map(go, FAULTS), strict=True))


def _outcomes(run: Run) -> dict[str, str]:
    """The document's own outcomes (labkit's rows count not measured as failed)."""
    return {it["id"].split("::", 1)[-1]: it["outcome"] for it in run.document["items"]}


def _about(outcomes: dict[str, str], node: str) -> dict[str, str]:
    return {k: v for k, v in outcomes.items() if node in k.split("[", 1)[-1]}


def _spark2_not_measured_spark1_measured(run: Run) -> None:
    outcomes = _outcomes(run)
    assert "failed" not in outcomes.values(), run.suite.failures()
    assert run.document["verdict"] == "incomplete"
    assert set(_about(outcomes, S2).values()) == {"not_measured"}, outcomes
    loopback = {k: v for k, v in outcomes.items() if k.startswith("test_nic_loopback[spark-1")}
    assert loopback and set(loopback.values()) == {"passed"}, outcomes


def test_a_tool_the_node_does_not_have_is_not_measured_with_its_install_line(
    runs: dict[str, Run],
) -> None:
    run = runs["tool_missing"]
    # The node's own shell does not find it: no wrapper, nothing on its PATH.
    path = f"PATH={run.lab.dir}/bin/{S2}:$PATH"
    r = run.lab.in_node(S2, ["sh", "-c", f"{path} command -v ib_write_bw"])
    assert r.returncode != 0 and r.stdout == ""
    _spark2_not_measured_spark1_measured(run)
    assert "spark-2: ib_write_bw: command not found" in run.suite.output
    assert "sudo apt install perftest" in run.suite.output
    (cause,) = run.document["causes"]
    assert cause["rule"] == "prerequisite_missing", cause
    assert run.strays == {}


def test_a_node_lost_mid_run_is_not_measured_and_no_hardware_is_blamed(
    runs: dict[str, Run],
) -> None:
    run = runs["node_lost"]
    _spark2_not_measured_spark1_measured(run)
    (cause,) = run.document["causes"]
    assert cause["rule"] == "node_unreachable", cause
    assert "NIC" not in run.suite.output.split("root cause", 1)[-1]
    # The node is gone for good: its sshd ended with it.
    t = run.lab.transport()
    try:
        r = t.run(Job(S2, "true", 5))
    finally:
        t.close()
    assert r.transport_error == f"{S2}: ssh: connection refused", r
    assert run.strays == {}


def test_the_lab_refuses_to_hide_a_tool_the_host_has(tmp_path: Path) -> None:
    from sparkfabric_lab import LabError

    path = labkit.cluster_file(
        tmp_path, "direct-2", faults=[{"fault": "tool_missing", "command": "ping", "node": S2}]
    )
    with pytest.raises(LabError, match=r"cannot take `ping` away: every node shares this host's"):
        labkit.build(path)
