"""A 64-node switch cluster as `sparkfabric init` writes it: the whole suite (a short soak) runs,
and a fault on one node of 64 fails exactly that node's bandwidth items, each naming it."""

from __future__ import annotations

import pytest
import yaml

from pytest_sparkfabric.cluster.initgen import generate, node_names
from tests.suite.runner import SHORT_SOAK, run_suite

pytestmark = pytest.mark.slow

NODES = 64
FAULTY = "spark-37"
NEIGHBOURS = ("spark-36", "spark-38")


def test_64_nodes_one_egress_cap_is_localized(pytester: pytest.Pytester) -> None:
    data = yaml.safe_load(generate("switch", node_names(str(NODES)), transport="sim"))
    data.update(SHORT_SOAK)
    data["simulate"] = {"seed": 7, "faults": [{"fault": "egress_cap", "node": FAULTY}]}
    path = pytester.path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = run_suite(pytester, path, "-p", "no:html", "-q")
    pairs = [f"spark-36<->{FAULTY}", f"{FAULTY}<->spark-38"]
    expected = {f"test_pair_rdma[{p}]" for p in pairs} | {f"test_pair_tcp[{p}]" for p in pairs}
    expected |= {
        f"test_rail_rdma[{a}:rail{r}<->{b}:rail{r}]"
        for a, b in (("spark-36", FAULTY), (FAULTY, "spark-38"))
        for r in (0, 1)
    }
    assert run.not_passed == expected, sorted(run.not_passed ^ expected)
    # Every test of every other node ran and passed: 64 nodes, legs in 2 rounds.
    assert len(run.outcomes) > 2000
    for item in expected:
        message = run.messages[item]
        assert f"toward {FAULTY}" in message, message
        if "rdma" in item:
            assert f"suspect {FAULTY} (its NIC port" in message, message
            assert not any(f"suspect {n}" in message for n in NEIGHBOURS), message
