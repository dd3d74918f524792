"""Whole runs of the suite on variants of the examples, each pinned by what its checks say
(runner.says, as the fault matrix's SAYS; `outcome=` is a check's outcome; under "" the run's
output, with `verdict=` and `ret=`; `node=` and `objects=` where a check sits) and, where
given, exactly which checks fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure.soak import memory_note
from tests.suite.runner import SHORT_SOAK, run_measurements, run_suite, says, write_cluster

pytestmark = pytest.mark.slow

PAIR = "test_pair_rdma[spark-1<->spark-2]"
SOAK = ("test_soak.py",)
DOWN = "spark-3: ssh: connection timed out after 10 s"
BOTH = ("spark-1", "spark-2")
BURN_80 = (
    "`gpu_burn -m 80 600` ended after ~2 s of the 600 s planned (exit status 123)",
    "its last line: 'No clients are alive!  Aborting'",
    "write `-m 80%`",
)


@dataclass(frozen=True)
class Case:
    base: str
    says: dict[str, tuple[str, ...]]
    markers: str | None = None
    failed: set[str] | None = None
    faults: list[dict[str, Any]] | None = None
    nodes: int | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    args: tuple[str, ...] = ()


def _duplex(directions: str, gbps: int, *words: str) -> Case:
    """`bandwidth.directions`: apart (the default) judges one-way runs by the one-way floors;
    together judges both-ways runs by the full-duplex floors, on ports that carry
    `simulate.full_duplex_gbps` each way while both directions run (issue 25 item 1)."""
    changes = {"bandwidth": {"directions": directions}, "simulate": {"full_duplex_gbps": gbps}}
    return Case("direct-2.yaml", {PAIR: words}, "bandwidth", changes=changes)


def _nccl_version(version: str, failed: set[str], *words: str) -> Case:
    """`rocep1s0f1:,roceP2p1s0f1:` is "any port" from NCCL 2.30.7 on and port 0 (nothing)
    before: the simulator and the product read it by the version on the nodes (issue 13 item 4)."""
    env = {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "rocep1s0f1:,roceP2p1s0f1:"}
    changes = {"nccl": {"env": env}, "simulate": {"seed": 3, "nccl_version": version}}
    says = {"test_nccl_ib_hca[spark-1]": words}
    return Case("direct-2.yaml", says, "nccl_env or nccl", failed, changes=changes)


def _healthy(base: str, nodes: int | None, sim: dict[str, Any], soak: bool) -> Case:
    """Healthy hardware as it ships (issue 25): QSFP56 or QSFP112 cables, a kernel whose ethtool
    prints no `Lanes:`, a realistic PAM4 trickle, 100G breakouts declared as such, is ACCEPTED;
    the soak runs (short) where the lanes' trickle is what is under test."""
    changes = {"simulate": sim, **(SHORT_SOAK if soak else {})}
    says = {"": ("verdict=accepted",), "test_kernel_log[spark-1]": ()}
    return Case(base, says, None if soak else "not soak", nodes=nodes, changes=changes)


HCA = {f"test_nccl_ib_hca[{n}]" for n in BOTH} | {f"test_nccl_uses_ib[{n}]" for n in BOTH}
PFC = {"fault": "host_pfc", "value": 3}
JOB = ("completes", "busbw")
CASES = {
    "together-170": _duplex("together", 170, "outcome=passed", "expected==>= 165 Gb/s"),
    "together-150": _duplex("together", 150, "outcome=failed", "expected==>= 165 Gb/s",
                            "full-duplex", "extrapolated"),  # below the 165 floor
    "apart-150": _duplex("apart", 150, "outcome=passed", "expected==>= 180 Gb/s"),
    "nccl-2.28.9": _nccl_version("2.28.9", HCA | {"test_nccl_busbw"}, "under NCCL 2.28.9"),
    "nccl-2.30.7": _nccl_version("2.30.7", set()),
    # A switch leg at MTU 1500 breaks RDMA, not only pings (issue 14): NCCL's IB transport, run
    # alone, fails with the sender's completion error and the MTU cause.
    "nccl-through-a-short-leg": Case(
        "demo.yaml",
        {"test_nccl_completes": ("~IBV_WC_RETRY_EXC_ERR|network error", "rule==mtu_path",
                                 "qsfp56-dd-1-5 mtu 1500")},
        "nccl", faults=[{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}], nodes=3,
    ),
    # RouterOS L2MTU excludes the Ethernet header: l2mtu 9000 carries mtu 9000.
    "leg-l2mtu-9000": Case(
        "demo.yaml",
        {"test_switch_leg_mtu[spark-1]": ("outcome=passed", "measured==mtu 9000, l2mtu 9000")},
        "mtu or switch", set(),
        faults=[{"fault": "mtu", "value": 9000, "switch_port": "qsfp56-dd-1-1"}], nodes=2,
    ),
    # The last line of the log kept so far: nccl-tests' table header, printed before its rows.
    "nccl-timeout-keeps-the-partial-log": Case(
        "direct-2.yaml",
        {"test_nccl_uses_ib[spark-1]": ("outcome=passed",),
         "test_nccl_uses_ib[spark-2]": ("outcome=passed",),
         "test_nccl_completes": ("did not finish within its deadline (10 s)", "(GB/s)")},
        "nccl", changes={"nccl": {"timeout_s": 10}}, files=("test_nccl.py",),
    ),
    "pfc-on-both-ends": Case(
        "direct-2.yaml",
        {"test_host_qos[spark-1]": ("measured==PFC on priority 3, trust pcp (mlnx_qos)",),
         "test_rail_counters[spark-2:rail0]": ("mode=lossless (PFC on priority 3",)},
        "qos or bandwidth", set(), faults=[{**PFC, "node": n} for n in BOTH],
    ),
    "pfc-on-one-end-fails-both-with-both-fixes": Case(
        "direct-2.yaml",
        {"test_host_qos[spark-2]": (
            "spark-2 enp1s0f1np1 (rail0): PFC on priority 3, trust pcp (mlnx_qos)",
            "on spark-2: `mlnx_qos -i enp1s0f1np1 --pfc 0,0,0,0,0,0,0,0`",
            "on spark-1: `mlnx_qos -i enp1s0f1np1 --pfc 0,0,0,1,0,0,0,0`", "rule==pfc_mismatch")},
        "qos", {f"test_host_qos[{n}]" for n in BOTH}, faults=[{**PFC, "node": "spark-2"}],
    ),
    # A GPU load that aborts fails instead of passing by omission (issue 12).
    "gpu-burn-m-80-is-80-megabytes": Case(
        "direct-2.yaml", {f"test_soak_load[{n}]": BURN_80 for n in BOTH}, "soak",
        {f"test_soak_load[{n}]" for n in BOTH},
        changes={"soak": {"gpu_load": "gpu_burn -m 80 {duration_s}"}}, files=SOAK, args=("-q",),
    ),
    # Advisory: no source gives a minimum rise; a cool NIC proves less, it is no fault.
    "a-soak-too-short-to-warm-the-nic-warns": Case(
        "direct-2.yaml",
        {"": ("ret=0", "ACCEPTED with 2 warnings", "NIC warmed only 3.1 C from idle")}, "soak",
        set(), changes={"soak": {"duration_s": 10, "interval_s": 5}}, files=SOAK, args=("-q",),
    ),
    # The soak needs two nodes that answer: it does not start. The bandwidth phase is still
    # asked for: it says nothing runs, not '0 node pairs' and rounds.
    "progress-counts-what-runs": Case(
        "faults/node_unreachable.yaml",
        {"": ("!heat soak:", "RDMA bandwidth (legs): no node pair answers at both ends\n",
              "!0 node pairs", "!round 1/")},
    ),
    "direct-2-qsfp56-no-lanes": _healthy(
        "direct-2.yaml", None, {"cable_type": "qsfp56", "kernel_lanes": False}, False),
    "direct-2-qsfp112-trickle-1500": _healthy(
        "direct-2.yaml", None, {"cable_type": "qsfp112", "lane_trickle_per_s": 1500}, True),
    "ring-4-qsfp112-no-lanes-trickle-900": _healthy(
        "ring-4.yaml", None,
        {"cable_type": "qsfp112", "kernel_lanes": False, "lane_trickle_per_s": 900}, True),
    "ring-4-qsfp56-no-lanes": _healthy(
        "ring-4.yaml", None, {"cable_type": "qsfp56", "kernel_lanes": False}, False),
    "switch-8-no-lanes-trickle-1500": _healthy(
        "switch-8.yaml", 4, {"kernel_lanes": False, "lane_trickle_per_s": 1500}, True),
    # The NCCL job is the cluster's: its items sit on the cluster object, not on the host where
    # mpirun started, nor on a node named after the rank count (issue 26 item 4).
    "nccl-items-on-the-cluster": Case(
        "demo.yaml",
        {**{f"test_nccl_{j}": ("node==None", "objects==the cluster") for j in JOB},
         **{f"test_nccl_uses_ib[spark-{n}]": (f"node==spark-{n}", f"objects==spark-{n}")
            for n in range(1, 5)}},
        "nccl", changes={"nccl": {"launch_node": "spark-4"}},
    ),
    "switch-8-100g-no-lanes": _healthy("switch-8-100g.yaml", 4, {"kernel_lanes": False}, False),
    "two-faults-at-once-are-both-named": Case(
        "direct-2.yaml",
        {"test_nccl_busbw": (RULES["nccl_socket"].cause, RULES["nic_throttled"].cause),
         PAIR: (RULES["nic_throttled"].cause,),
         **{f"test_nccl_uses_ib[{n}]": ("outcome=failed",) for n in BOTH}},
        faults=[{"fault": "nic_throttled", "node": "spark-1"}, {"fault": "nccl_socket"}],
        changes=SHORT_SOAK,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_a_run_says(pytester: pytest.Pytester, name: str) -> None:
    c = CASES[name]
    path = write_cluster(pytester.path, c.base, faults=c.faults, nodes=c.nodes, changes=c.changes)
    run = run_suite(pytester, path, "-p", "no:html", *c.args, markers=c.markers, files=c.files)
    if c.failed is not None:
        assert run.failed == c.failed, {k: run.messages[k] for k in run.failed ^ c.failed}
    for key, expected in c.says.items():
        message, props = run.stdout, {"verdict": run.doc["verdict"], "ret": str(run.ret)}
        if key:
            assert key in run.outcomes, sorted(run.outcomes)
            item = next(i for i in run.doc["items"] if i["id"].endswith(f"::{key}"))
            where = {"node": str(item["node"]), "objects": ",".join(item["objects"])}
            message = run.messages[key]
            props = {**run.props[key], "outcome": run.outcomes[key], **where}
        for words in expected:
            assert says(message, props, words), (key, words, message)


def test_one_node_down_of_four(pytester: pytest.Pytester) -> None:
    """Its items fail with its one line, the phases go on without it, and a phase that cannot
    run without it fails at once."""
    down = [{"fault": "node_unreachable", "node": "spark-3"}]
    path = write_cluster(pytester.path, "demo.yaml", faults=down, changes=SHORT_SOAK)
    r = run_measurements(pytester, path)
    assert "1 of 4 nodes not reachable; their tests are not measured: " + DOWN in r.stdout
    involving = {k for k in r.outcomes if "spark-3" in k}
    assert involving
    for key in involving:
        assert r.outcomes[key] == "failed", key
        assert r.messages[key] == f"not measured: {DOWN}", (key, r.messages[key])
    # The others are measured as usual, without spark-3 in their rounds.
    for key in ("test_pair_rdma[spark-1<->spark-2]", "test_pair_tcp[spark-1<->spark-4]",
                "test_nic_loopback[spark-4:rail1]", "test_soak_link[spark-1:rail0]",
                "test_soak_load[spark-4]"):  # fmt: skip
        assert r.outcomes[key] == "passed", (key, r.messages[key])
    # NCCL needs every node: it fails at once, it does not wait for mpirun to give up.
    for key in ("test_nccl_completes", "test_nccl_busbw", "test_nccl_uses_ib[spark-1]"):
        assert r.messages[key] == f"not measured: NCCL needs all 4 nodes; {DOWN}"
    assert "NCCL: all_reduce_perf" not in r.stdout
    # legs: 4 pairs (each node with two ring neighbours), 2 of them with spark-3.
    assert "RDMA bandwidth (legs): 2 node pairs" in r.stdout


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("cable", ["qsfp56", "qsfp112"])
@pytest.mark.parametrize("trickle", [3.0, 3000.0])
def test_a_healthy_soak_never_flags_a_lane(
    pytester: pytest.Pytester, seed: int, cable: str, trickle: float
) -> None:
    sim = {"seed": seed, "cable_type": cable, "lane_trickle_per_s": trickle}
    path = write_cluster(pytester.path, "direct-2.yaml", changes={"simulate": sim})
    r = run_suite(pytester, path, "-q", markers="soak", files=SOAK)
    assert len(r.outcomes) == 6
    assert not r.not_passed, {k: r.messages[k] for k in r.not_passed}


@pytest.mark.parametrize(
    ("gpu_load", "hint"),
    [
        ("gpu_burn -m 50% {duration_s}", "write `-m 50%`"),
        ("gpu_burn -m 30 {duration_s}", "reads `-m 30` as 30 MB and aborts; write `-m 30%`"),
        ("gpu_burn {duration_s}", ""),
    ],
)
def test_the_load_hint_quotes_the_configured_memory_share(gpu_load: str, hint: str) -> None:
    note = memory_note(gpu_load)
    assert (hint in note) if hint else note == ""
    assert "80" not in note
