"""diagnose(): evidence in, the causes of DOMAIN.md §8 out (pure). The fault matrix pins each
fault's cause and objects on a whole run; this table pins what a run cannot show: the order of
rules, certain or possible, and what a finding says."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence, NcclEvidence, PairRates, Rate, Site
from pytest_sparkfabric.diagnosis.miscabling import End, Wire, solve

A, B = "spark-1", "spark-2"
HCAS = ("rocep1s0f1", "roceP2p1s0f1")


def loop(node: str, *gbps: float) -> tuple[Rate, ...]:
    return tuple(Rate(f"{node}:rail{i}", (node,), g, f"dev{i}") for i, g in enumerate(gbps))


def rail(gbps: float | None, i: int = 0) -> Rate:
    return Rate(f"{A}:rail{i}->{B}:rail{i}", (A, B), gbps, f"rail{i}")


def pair(*gbps: float) -> PairRates:
    return PairRates(f"{A}<->{B}", (A, B), tuple(rail(g, i) for i, g in enumerate(gbps)), HCAS)


def rdma(*gbps: float) -> dict[str, Any]:
    """The rails of A<->B measured one by one and together."""
    return {"rdma": tuple(rail(g, i) for i, g in enumerate(gbps)), "pairs": (pair(*gbps),)}


HEALTHY = loop(A, 106, 105) + loop(B, 107, 106)
MISCABLED = solve(
    [Wire(End("spark-2", 0), End("spark-3", 1)), Wire(End("spark-4", 0), End(B, 1))],
    [Wire(End("spark-2", 1), End("spark-3", 1)), Wire(End("spark-4", 0), End(B, 0))],
)
SLOW = (Site("spark-1:rail0 at 100000Mb/s", (A,)), Site("spark-2:rail0 at 100000Mb/s", (B,)))
ONE_HCA = {"spark-1 (rank 0)": HCAS[:1], "spark-2 (rank 1)": HCAS[:1]}

# id: Evidence -> (rule, certain) of every finding, most specific first, and what they say.
CASES: dict[str, tuple[Evidence, list[tuple[str, bool]], tuple[str, ...]]] = {
    "healthy is silent": (
        Evidence(loopback=HEALTHY, **rdma(108, 107), tcp=(pair(97, 96),),
                 nccl=NcclEvidence("nccl", True, 22.9, ("IB",), devices={"r0": ("a", "b")})),
        [], (),
    ),
    "no evidence, no finding": (Evidence(), [], ()),
    "a throttled NIC is the NIC, not the cable": (
        Evidence(loopback=loop(A, 13.1, 12.8) + loop(B, 106, 106), **rdma(12.9, 13.0)),
        [("nic_throttled", True)], ("spark-1: loopback dev0 13.1 Gb/s", "unplug power for 60 s"),
    ),
    "half port names both devices in the fix": (
        Evidence(loopback=HEALTHY, **rdma(103.9, 0.3)),
        [("half_port", True)],
        ("only one of the port's two", "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1", "rail1 0.3 Gb/s"),
    ),
    "a dead half even in loopback is half port, not throttling": (
        Evidence(loopback=loop(A, 106, 0.3) + loop(B, 106, 107), **rdma(104, 0.3),
                 tcp=(pair(106, 0.02),)),
        [("half_port", True)], ("even inside the box",),
    ),
    "switch forwarding: TCP slow too": (
        Evidence(loopback=HEALTHY, **rdma(4.0, 3.5), tcp=(pair(4.9, 4.8),)),
        [("switch_cpu_forwarding", True)], (),
    ),
    "PFC stall: TCP fine": (
        Evidence(loopback=HEALTHY, **rdma(5.1, 4.6), tcp=(pair(105, 104),)),
        [("pfc_stall", True)], (),
    ),
    "slow RDMA without TCP is a question": (
        Evidence(rdma=(rail(9.0),)),
        [("nic_throttled", False), ("switch_cpu_forwarding", False), ("pfc_stall", False)],
        ("measure TCP",),
    ),
    "a busy switch CPU settles it": (
        Evidence(loopback=HEALTHY, rdma=(rail(9.0),), switch_cpu_load_pct=97),
        [("switch_cpu_forwarding", True)], (),
    ),
    "link down beats half port": (
        Evidence(loopback=HEALTHY, pairs=(pair(104, 0.0),), no_link=(Site(f"{A}:rail1", (A,)),)),
        [("link_down", True)], (),
    ),
    "single HCA guessed from busbw alone": (
        Evidence(nccl=NcclEvidence("nccl", True, 13.9, ("IB",))),
        [("nccl_single_hca", False)], (),
    ),
    "single HCA from the NET/IB line": (
        Evidence(nccl=NcclEvidence("nccl", True, 13.9, ("IB",), devices=ONE_HCA, expected=HCAS)),
        [("nccl_single_hca", True)], ("NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1",),
    ),
    "one device of a non-Spark NIC is not flagged": (
        Evidence(nccl=NcclEvidence("nccl", True, 2.6, ("IBext_v8",), devices={"h": ("mlx5_2",)})),
        [], (),
    ),
    "an NCCL crawl over IB points at the switch": (
        Evidence(nccl=NcclEvidence("nccl", True, 0.46, ("IB",)), switch_cpu_load_pct=88),
        [("switch_cpu_forwarding", True)], (),
    ),
    "miscabling and slow links name their objects": (
        Evidence(miscabled=MISCABLED, slow_links=SLOW),
        [("miscabled", True), ("speed_degraded", True)],
        ("(spark-2:p0<->spark-3:p1, spark-4:p0<->spark-2:p1: cabled ",
         "Fix: exchange the two cables in spark-2 port 0 and port 1.",
         "(spark-1:rail0 at 100000Mb/s, spark-2:rail0 at 100000Mb/s: ethtool",
         "a breakout on the Spark side"),
    ),
    "every rail dead in loopback: a possible throttle": (
        Evidence(loopback=loop(A, 0.2, 0.1)), [("nic_throttled", False)], (),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("ev", "expected", "says"), CASES.values(), ids=CASES.keys())
def test_evidence_names_its_rules(
    ev: Evidence, expected: list[tuple[str, bool]], says: tuple[str, ...]
) -> None:
    found = diagnose(ev)
    assert [(f.rule.id, f.certain) for f in found] == expected
    text = "\n".join(f.render() for f in found)
    assert [s for s in says if s not in text] == []
    assert all(f.render().startswith(("Likely cause: ", "Possible cause: ")) for f in found)
    if ev.miscabled:  # a miscabling concerns the nodes of its cables
        assert found[0].concerns(["spark-4"]) and not found[0].concerns([A])
