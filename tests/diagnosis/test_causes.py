"""Objects a finding blames, items that take only causes on their own path, and root causes
grouped from failed items (pure)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.cluster.model import Cluster
from pytest_sparkfabric.cluster.plan import Link, Plan, plan
from pytest_sparkfabric.diagnosis.causes import Failure, RootCauses, group, of_findings
from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence, Finding, Rate, Site
from pytest_sparkfabric.diagnosis.rules import RULES, RuleId
from pytest_sparkfabric.measure.localize import suspects

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def mesh() -> tuple[Cluster, Plan]:
    c = load_cluster(EXAMPLES / "mesh-3.yaml")
    return c, plan(c)


def link(p: Plan, a: str, b: str, rail: int) -> Link:
    return next(x for x in p.links if {x.a.node, x.b.node} == {a, b} and x.rail == rail)


def finding(rule: RuleId, objs: tuple[objects.Obj, ...], where: str = "w") -> Finding:
    return Finding(RULES[rule], where, (), "seen", objects=objs)


def test_a_cable_meets_every_rail_of_its_two_ports_and_nothing_else() -> None:
    _, p = mesh()
    cable = objects.cable_of(p, "spark-2", 0)
    assert cable is not None and cable.id == "spark-2:p0<->spark-3:p1"
    on_it = link(p, "spark-2", "spark-3", 1)
    elsewhere = link(p, "spark-3", "spark-1", 1)
    assert objects.meet([cable], objects.path(on_it))
    # spark-3 is at both ends, but the other cable is another path.
    assert not objects.meet([cable], objects.path(elsewhere))
    assert objects.meet([objects.node("spark-3")], objects.path(elsewhere))
    assert objects.meet([objects.CLUSTER], objects.path(elsewhere))


def test_a_dead_half_meets_only_its_own_rail() -> None:
    c, p = mesh()
    dead = objects.rail(c.node("spark-1").rail(1, 1))
    assert objects.meet([dead], objects.path(link(p, "spark-3", "spark-1", 1)))
    assert not objects.meet([dead], objects.path(link(p, "spark-3", "spark-1", 0)))
    assert not objects.meet([dead], objects.path(link(p, "spark-1", "spark-2", 1)))


def test_link_down_blames_the_cable_not_the_nodes() -> None:
    c, p = mesh()
    cable = objects.cable_of(p, "spark-2", 0)
    assert cable is not None
    ev = Evidence(
        no_link=tuple(
            Site(r.id, (r.node,), (cable,))
            for r in (*c.node("spark-2").rails_of(0), *c.node("spark-3").rails_of(1))
        )
    )
    (f,) = diagnose(ev)
    assert f.rule.id == "link_down" and objects.ids(f.objects) == ("spark-2:p0<->spark-3:p1",)
    assert not f.about(objects.path(link(p, "spark-3", "spark-1", 1)))
    assert f.about(objects.path(link(p, "spark-2", "spark-3", 0)))


def test_a_dead_half_in_loopback_gets_a_hardware_fix() -> None:
    c, _ = mesh()
    rails = c.node("spark-1").rails
    ev = Evidence(
        loopback=tuple(
            Rate(r.id, (r.node,), 0.3 if i == 3 else 105.0, r.rdma, None, (objects.rail(r),))
            for i, r in enumerate(rails)
        )
    )
    (f,) = [f for f in diagnose(ev) if f.rule.id == "half_port"]
    assert objects.ids(f.objects) == (rails[3].id,)
    assert "faulty hardware, not a setting" in f.cause_text
    assert "NCCL_IB_HCA" not in f.fix_text
    assert "PCIe" in f.fix_text and "unplug power for 60 s" in f.fix_text


def _issue_example() -> tuple[list[Failure], Plan]:
    """3-node mesh, the cable spark-2:p0<->spark-3:p1 down, spark-1's p1rail1 half dead."""
    c, p = mesh()
    cable = objects.cable_of(p, "spark-2", 0)
    assert cable is not None
    down = finding("link_down", (cable,), cable.id)
    dead = finding("half_port", (objects.rail(c.node("spark-1").rail(1, 1)),))
    fails = [
        Failure(f"test_link[{r.id}]", objects.path(r), (down,))
        for r in (*c.node("spark-2").rails_of(0), *c.node("spark-3").rails_of(1))
    ]
    fails.append(Failure("test_nic_loopback[spark-1:p1rail1]", (), (dead,)))
    for x in p.links:
        if {x.a.node, x.b.node} == {"spark-2", "spark-3"}:
            fails.append(Failure(f"test_rail_rdma[{x.id}]", objects.path(x), (down,)))
    bad = link(p, "spark-3", "spark-1", 1)
    fails.append(Failure(f"test_rail_rdma[{bad.id}]", objects.path(bad), (dead, down)))
    fails.append(Failure("test_nccl_busbw", (), (down, dead)))
    fails.append(Failure("test_soak_load[spark-2]", objects.path(c.node("spark-2")), ()))
    return fails, p


def test_root_causes_name_each_fault_once_with_its_objects() -> None:
    fails, _ = _issue_example()
    found = group(fails)
    assert [(c.rule, c.objects) for c in found.causes] == [
        ("link_down", ("spark-2:p0<->spark-3:p1",)),
        ("half_port", ("spark-1:p1rail1",)),
    ]
    down, dead = found.causes
    assert "test_rail_rdma[spark-3:p0rail1<->spark-1:p1rail1]" in dead.items
    assert "test_rail_rdma[spark-3:p0rail1<->spark-1:p1rail1]" not in down.items
    assert "test_nccl_busbw" in down.items
    assert found.unexplained == ("test_soak_load[spark-2]",)
    text = "\n".join(found.lines())
    assert text.startswith("2 root causes:\n")
    assert "  1. [link_down] spark-2:p0<->spark-3:p1: no link on the cable" in text
    assert "  2. [half_port] spark-1:p1rail1: " in text
    assert "     Fix: reseat or replace the cable" in text
    assert "     explains 7 checks" in text


def test_a_consequence_joins_its_deeper_cause_on_a_meeting_object() -> None:
    c, p = mesh()
    r = c.node("spark-1").rail(0, 0)
    d = next(d for d in p.directed if d.src == r)
    back = next(x for x in p.directed if x.src == d.dst and x.dst == r)
    fails = [
        Failure(
            f"test_mtu[{r.id}]", objects.path(r), (finding("mtu_mismatch", (objects.rail(r),)),)
        ),
        Failure(f"ping[{d.id}]", objects.path(d), (finding("mtu_local", objects.path(d)),)),
        Failure(f"ping[{back.id}]", objects.path(back), (finding("mtu_path", objects.path(back)),)),
    ]
    (only,) = group(fails).causes
    assert only.rule == "mtu_mismatch" and only.objects == (r.id,)
    assert len(only.items) == 3


def test_healthy_run_has_no_root_causes() -> None:
    assert group([]) == RootCauses()
    assert group([]).lines() == ["no root causes"]


@pytest.mark.parametrize("bad", ["spark-3", "spark-4"])
def test_a_node_failing_with_two_partners_is_the_suspect_behind_a_switch(bad: str) -> None:
    c = load_cluster(EXAMPLES / "demo.yaml")
    p = plan(c)
    fails: list[Failure] = []
    passed: list[Failure] = []
    for x in p.links:
        seen = Failure(f"test_rail_rdma[{x.id}]", objects.path(x))
        (fails if bad in x.nodes() else passed).append(seen)
    found = group(fails, passed, partial(suspects, cables=None))
    (only,) = found.causes
    assert only.rule == "node_suspect" and only.objects == (bad,)
    assert set(only.items) == {f.item for f in fails}
    assert not found.unexplained
    assert f"{bad} (rail 0, rail 1): fails both ways with" in only.evidence[0]


def test_explain_prints_root_causes() -> None:
    f = finding("nic_throttled", (), "loop.txt")
    text = "\n".join(of_findings([f]).lines())
    assert text.startswith("1 root cause:\n  1. [nic_throttled] loop.txt: the NIC is throttled")
    assert "     Fix: reboot both boxes" in text


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
    (only,) = group(fails).causes
    assert only.objects == ("spark-1", "spark-2")
    assert only.fix == (
        "on spark-1, set NCCL_IB_HCA=a,b in /etc/nccl.conf line 2; "
        "on spark-2, set NCCL_IB_HCA=a,b in /etc/nccl.conf line 2"
    )
    assert len(only.items) == 3


def test_a_consequence_that_failed_first_still_joins_its_deeper_cause() -> None:
    c, p = mesh()
    cable = objects.cable_of(p, "spark-2", 0)
    assert cable is not None
    node = (objects.node("spark-2"),)
    rail = (objects.rail(c.node("spark-2").rail(0, 0)),)
    found = group(
        [
            Failure("test_cabling[spark-2]", node, (finding("link_down", (cable,)),)),
            Failure("test_link[spark-2:p0rail0]", rail, (finding("autoneg_failed", (cable,)),)),
        ]
    )
    assert [(x.rule, x.items) for x in found.causes] == [
        ("autoneg_failed", ("test_link[spark-2:p0rail0]", "test_cabling[spark-2]"))
    ]


def test_rails_of_one_fault_blame_the_thing_their_rule_names() -> None:
    c, p = mesh()
    rails = [objects.rail(c.node("spark-2").rail(0, r)) for r in (0, 1)]
    assert objects.blamed_as("node", p, (), rails) == (objects.node("spark-2"),)
    cables = objects.blamed_as("cable", p, (), rails)
    assert [o.id for o in cables] == ["spark-2:p0<->spark-3:p1"]
    assert objects.blamed_as("leg", p, ("spark-2",), rails) == ()


def test_an_egress_cap_blames_the_switch_leg_toward_the_node_and_the_node() -> None:
    c = load_cluster(EXAMPLES / "faults" / "egress_cap.yaml")
    rails = [objects.rail(c.node("spark-1").rail(1, 0)), objects.rail(c.node("spark-3").rail(1, 0))]
    blamed = objects.blamed_as("leg", plan(c), ("spark-3",), rails)
    assert [o.id for o in blamed] == ["switch:qsfp56-dd-2-1", "spark-3"]
