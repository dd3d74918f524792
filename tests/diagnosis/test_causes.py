"""Root causes grouped from failed items (pure). Each example's causes, their objects and the
checks each explains are pinned by the fault matrix (a consequence that failed first joining its
deeper cause: faults/autoneg_failed's test_cabling); here: what no example reaches."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.cluster.plan import plan
from pytest_sparkfabric.diagnosis.causes import Failure, group, lines, of_findings
from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES, RuleId
from pytest_sparkfabric.measure.localize import suspects

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def finding(rule: RuleId, objs: tuple[objects.Obj, ...], where: str = "w") -> Finding:
    return Finding(RULES[rule], where, (), "seen", objects=objs)


def test_explain_prints_root_causes_and_a_healthy_run_none() -> None:
    text = "\n".join(lines(of_findings([finding("nic_throttled", (), "loop.txt")])))
    assert text.startswith("1 root cause:\n  1. [nic_throttled] loop.txt: the NIC is throttled")
    assert "     Fix: reboot both boxes" in text
    assert group([]) == ()
    assert lines(group([])) == ["no root causes"]


@pytest.mark.parametrize("bad", ["spark-3", "spark-4"])
def test_a_node_failing_with_two_partners_is_the_suspect_behind_a_switch(bad: str) -> None:
    p = plan(load_cluster(EXAMPLES / "demo.yaml"))
    fails: list[Failure] = []
    passed: list[Failure] = []
    for x in p.links:
        seen = Failure(f"test_rail_rdma[{x.id}]", objects.path(x))
        (fails if bad in x.nodes() else passed).append(seen)
    (only,) = group(fails, passed, partial(suspects, cables=None))
    assert only.rule == "node_suspect" and only.objects == (bad,)
    assert set(only.items) == {f.item for f in fails}
    assert f"{bad} (rail 0, rail 1): fails both ways with" in only.evidence[0]


def test_one_setting_wrong_on_two_nodes_is_one_cause_with_each_fix() -> None:
    rule = RULES["nccl_single_hca"]
    fails = [
        Failure(
            f"test_nccl_ib_hca[{n}]",
            (objects.node(n),),
            (Finding(rule, n, (), "", f"on {n}, set NCCL_IB_HCA=a,b in /etc/nccl.conf line 2"),),
        )
        for n in ("spark-1", "spark-2")
    ]
    fails.append(Failure("test_nccl_busbw", (), (Finding(rule, "NCCL", (), "busbw 13.9"),)))
    (only,) = found = group(fails)
    assert lines(found)[-1] == "     explains 3 checks"
    assert only.objects == ("spark-1", "spark-2")
    assert only.fix == (
        "on spark-1, set NCCL_IB_HCA=a,b in /etc/nccl.conf line 2; "
        "on spark-2, set NCCL_IB_HCA=a,b in /etc/nccl.conf line 2"
    )
    assert len(only.items) == 3
