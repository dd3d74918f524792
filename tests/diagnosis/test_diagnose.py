"""diagnose(): evidence in, the causes of DOMAIN.md §8 out (pure)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence, NcclEvidence, PairRates, Rate, Site
from pytest_sparkfabric.diagnosis.miscabling import End, Wire, solve
from pytest_sparkfabric.diagnosis.rules import RULES

A, B = "spark-1", "spark-2"


def loop(node: str, *gbps: float) -> tuple[Rate, ...]:
    return tuple(Rate(f"{node}:rail{i}", (node,), g, f"dev{i}") for i, g in enumerate(gbps))


def rail(gbps: float | None, i: int = 0, nodes: tuple[str, str] = (A, B)) -> Rate:
    where = f"{nodes[0]}:rail{i}->{nodes[1]}:rail{i}"
    return Rate(where, nodes, gbps, f"rail{i}")


def pair(*gbps: float, nodes: tuple[str, str] = (A, B)) -> PairRates:
    return PairRates(
        f"{nodes[0]}<->{nodes[1]}",
        nodes,
        tuple(rail(g, i, nodes) for i, g in enumerate(gbps)),
        ("rocep1s0f1", "roceP2p1s0f1"),
    )


HEALTHY_LOOP = loop(A, 106, 105) + loop(B, 107, 106)


def test_healthy_is_silent() -> None:
    ev = Evidence(
        loopback=HEALTHY_LOOP,
        rdma=(rail(108), rail(107, 1)),
        pairs=(pair(108, 107),),
        tcp=(pair(97, 96),),
        nccl=NcclEvidence("nccl", True, 22.9, ("IB",), devices={"r0": ("a", "b")}),
    )
    assert diagnose(ev) == []
    assert diagnose(Evidence()) == []


def test_throttled_nic_is_the_nic_not_the_cable() -> None:
    ev = Evidence(
        loopback=loop(A, 13.1, 12.8) + loop(B, 106, 106),
        rdma=(rail(12.9), rail(13.0, 1)),
        pairs=(pair(12.9, 13.0),),
    )
    found = diagnose(ev)
    assert [f.rule.id for f in found] == ["nic_throttled"]
    assert found[0].nodes == (A,)
    assert "13.1" in found[0].evidence
    assert "60 s" in found[0].render()


def test_half_port_names_both_devices_in_the_fix() -> None:
    ev = Evidence(
        loopback=HEALTHY_LOOP, rdma=(rail(103.9), rail(0.3, 1)), pairs=(pair(103.9, 0.3),)
    )
    found = diagnose(ev)
    assert [f.rule.id for f in found] == ["half_port"]
    text = found[0].render()
    assert "only one of the port's two" in text
    assert "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1" in text
    assert "rail1 0.3 Gb/s" in text


# Evidence -> (rule, certain) of every finding, most specific first.
CASES = {
    "switch forwarding: TCP slow too": (
        Evidence(
            loopback=HEALTHY_LOOP,
            rdma=(rail(4.0), rail(3.5, 1)),
            pairs=(pair(4.0, 3.5),),
            tcp=(pair(4.9, 4.8),),
        ),
        [("switch_cpu_forwarding", True)],
    ),
    "PFC stall: TCP fine": (
        Evidence(
            loopback=HEALTHY_LOOP,
            rdma=(rail(5.1), rail(4.6, 1)),
            pairs=(pair(5.1, 4.6),),
            tcp=(pair(105, 104),),
        ),
        [("pfc_stall", True)],
    ),
    "a busy switch CPU settles it": (
        Evidence(loopback=HEALTHY_LOOP, rdma=(rail(9.0),), switch_cpu_load_pct=97),
        [("switch_cpu_forwarding", True)],
    ),
    "link down beats half port": (
        Evidence(
            loopback=HEALTHY_LOOP, pairs=(pair(104, 0.0),), no_link=(Site(f"{A}:rail1", (A,)),)
        ),
        [("link_down", True)],
    ),
    "NCCL over sockets and a throttled NIC both named": (
        Evidence(
            loopback=loop(A, 13.0, 13.2) + loop(B, 106, 106),
            nccl=NcclEvidence("nccl", True, 1.9, ("Socket",), socket=True),
        ),
        [("nic_throttled", True), ("nccl_socket", True)],
    ),
    "single HCA guessed from busbw alone": (
        Evidence(nccl=NcclEvidence("nccl", True, 13.9, ("IB",))),
        [("nccl_single_hca", False)],
    ),
    "one device of a non-Spark NIC is not flagged": (
        Evidence(nccl=NcclEvidence("nccl", True, 2.6, ("IBext_v8",), devices={"h": ("mlx5_2",)})),
        [],
    ),
    "an NCCL crawl over IB points at the switch": (
        Evidence(nccl=NcclEvidence("nccl", True, 0.46, ("IB",)), switch_cpu_load_pct=88),
        [("switch_cpu_forwarding", True)],
    ),
    "every rail dead in loopback: a possible throttle": (
        Evidence(loopback=loop(A, 0.2, 0.1)),
        [("nic_throttled", False)],
    ),
}


@pytest.mark.parametrize(("ev", "expected"), CASES.values(), ids=CASES.keys())
def test_evidence_names_its_rules(ev: Evidence, expected: list[tuple[str, bool]]) -> None:
    assert [(f.rule.id, f.certain) for f in diagnose(ev)] == expected


def test_slow_rdma_without_tcp_is_a_question() -> None:
    ev = Evidence(rdma=(rail(9.0),))
    found = diagnose(ev)
    assert {f.rule.id for f in found} == {"switch_cpu_forwarding", "pfc_stall", "nic_throttled"}
    assert not any(f.certain for f in found)
    assert "measure TCP" in found[-1].evidence


def test_single_hca_from_the_net_ib_line() -> None:
    ev = Evidence(
        nccl=NcclEvidence(
            "nccl",
            True,
            13.9,
            ("IB",),
            devices={"spark-1 (rank 0)": ("rocep1s0f1",), "spark-2 (rank 1)": ("rocep1s0f1",)},
            expected=("rocep1s0f1", "roceP2p1s0f1"),
        )
    )
    found = diagnose(ev)
    assert [f.rule.id for f in found] == ["nccl_single_hca"]
    assert "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1" in found[0].render()


def test_every_finding_uses_a_known_rule() -> None:
    ev = Evidence(
        loopback=loop(A, 13.0),
        rdma=(rail(9.0, nodes=("x", "y")),),
        pairs=(pair(100, 0.1, nodes=("p", "q")),),
        nccl=NcclEvidence("nccl", True, 1.0, ("Socket",), socket=True),
        no_link=(Site("z:rail0", ("z",)),),
    )
    for f in diagnose(ev):
        assert RULES[f.rule.id] is f.rule
        assert f.render().startswith(("Likely cause: ", "Possible cause: "))


def test_a_dead_half_even_in_loopback_is_half_port_not_throttling() -> None:
    ev = Evidence(
        loopback=loop(A, 106, 0.3) + loop(B, 106, 107),
        rdma=(rail(104), rail(0.3, 1)),
        pairs=(pair(104, 0.3),),
        tcp=(pair(106, 0.02),),
    )
    found = diagnose(ev)
    assert [f.rule.id for f in found] == ["half_port"]
    assert found[0].nodes == (A,)
    assert "even inside the box" in found[0].evidence


# The evidence rules for miscabling, a 100G link, the launch environment and a firewall.
def test_each_rule_names_its_objects_and_fix() -> None:
    ev = Evidence(
        miscabled=solve(
            [
                Wire(End("spark-2", 0), End("spark-3", 1)),
                Wire(End("spark-4", 0), End("spark-2", 1)),
            ],
            [
                Wire(End("spark-2", 1), End("spark-3", 1)),
                Wire(End("spark-4", 0), End("spark-2", 0)),
            ],
        ),
        slow_links=(
            Site("spark-1:rail0 at 100000Mb/s", ("spark-1",)),
            Site("spark-2:rail0 at 100000Mb/s", ("spark-2",)),
        ),
        launch=(Site("NCCL_SOCKET_IFNAME=eth0 selects nothing", ("spark-3",)),),
        refused=(Site("servers listened on spark-4 but ...", ("spark-4",)),),
    )
    found = {f.rule.id: f for f in diagnose(ev)}
    assert list(found) == ["miscabled", "speed_degraded", "nccl_socket_ifname", "firewall"]
    mis = found["miscabled"]
    assert mis.concerns(["spark-4"]) and not mis.concerns(["spark-1"])
    assert [o.id for o in mis.objects] == ["spark-2:p0<->spark-3:p1", "spark-4:p0<->spark-2:p1"]
    assert mis.render().endswith("Fix: exchange the two cables in spark-2 port 0 and port 1.")
    speed = found["speed_degraded"]
    assert speed.where == "spark-1:rail0 at 100000Mb/s, spark-2:rail0 at 100000Mb/s"
    assert "a breakout on the Spark side" in speed.render()
    assert found["nccl_socket_ifname"].nodes == ("spark-3",)
    assert found["firewall"].concerns(["spark-1", "spark-4"])
