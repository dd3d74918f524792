"""How measurement failures read: a shaped switch leg on any node of 4 or of 64 failing exactly
its pairs, each naming it (the schedule in the progress lines too; the matrix pins which checks
fail, SAYS a dead PCIe half; two faults at once: test_runs.CASES)."""

from __future__ import annotations

import re

import pytest
import yaml

from pytest_sparkfabric.cluster.initgen import generate, node_names
from pytest_sparkfabric.diagnosis.rules import RULES
from tests.suite.runner import SHORT_SOAK, SuiteRun, run_measurements, run_suite, write_cluster

CAP = RULES["egress_rate_cap"].fix


def _touching(pairs: list[tuple[int, int]]) -> set[str]:
    """The RDMA and TCP items of these measured node pairs."""
    out: set[str] = set()
    for a, b in pairs:
        pair = f"spark-{a}<->spark-{b}"
        out |= {f"test_pair_rdma[{pair}]", f"test_pair_tcp[{pair}]"}
        out |= {f"test_rail_rdma[spark-{a}:rail{r}<->spark-{b}:rail{r}]" for r in (0, 1)}
    return out


def _only_its_pairs_name_it(r: SuiteRun, node: int, pairs: list[tuple[int, int]]) -> None:
    """Exactly the pairs of the shaped leg fail, each naming the direction into it, and the
    bandwidth phase names that node as the suspect (not its partners)."""
    expected = _touching([p for p in pairs if node in p])
    assert r.not_passed == expected, sorted(r.not_passed ^ expected)
    x = f"spark-{node}"
    for name in expected:
        message = r.messages[name]
        assert f"toward {x}" in message and CAP in message, message
        if "rdma" in name:
            assert f"suspect {x} (its NIC port, its cable or its switch leg)" in message, message
            assert not any(
                re.search(rf"suspect spark-{n}\b", message) for p in pairs for n in p if n != node
            ), message
        if "rail_rdma" in name:
            assert f"(into {x})" in message, message


@pytest.mark.parametrize("node", [1, 2, 4])
def test_egress_cap_on_any_node_is_named_with_its_direction(
    pytester: pytest.Pytester, node: int
) -> None:
    faults = [{"fault": "egress_cap", "node": f"spark-{node}", "value": 25000}]
    path = write_cluster(pytester.path, "faults/egress_cap.yaml", faults=faults, changes=SHORT_SOAK)
    r = run_measurements(pytester, path)
    # The progress lines show the schedule; round by round only where rounds take real time
    # (the simulator's are over in a moment).
    assert (
        "RDMA bandwidth (legs): 4 node pairs in 4 rounds of 10 s, both rails at once "
        "(no node in two tests at once)" in r.stdout
    )
    assert "round 2/4:" not in r.stdout
    # Each pair's first round: directions apart, legs of 4 nodes run a->b in 1 or 3.
    rounds = {r.props[k]["round"] for k in r.outcomes if k.startswith("test_pair_rdma[")}
    assert sorted(rounds) == ["1", "3"]
    # legs: each node with its two ring neighbours
    _only_its_pairs_name_it(r, node, [(1, 2), (1, 4), (2, 3), (3, 4)])


@pytest.mark.slow
def test_64_nodes_as_init_writes_them_one_egress_cap_is_localized(
    pytester: pytest.Pytester,
) -> None:
    data = yaml.safe_load(generate("switch", node_names("64"), transport="sim"))
    data.update(SHORT_SOAK)
    data["simulate"] = {"seed": 7, "faults": [{"fault": "egress_cap", "node": "spark-37"}]}
    path = pytester.path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = run_suite(pytester, path, "-p", "no:html", "-q")
    # Every test of every other node ran and passed: 64 nodes, legs in 2 rounds.
    assert len(run.outcomes) > 2000
    _only_its_pairs_name_it(run, 37, [(36, 37), (37, 38)])
