"""The measurement suite against the simulator: healthy examples pass, each fault fails exactly
the expected tests and names its cause (DOMAIN.md §8), two faults at once are both named."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES, RuleId
from tests.suite.runner import EXAMPLES, SHORT_SOAK, run_measurements, write_cluster

pytestmark = pytest.mark.slow

HEALTHY = ["direct-2.yaml", "mesh-3.yaml", "ring-4.yaml", "demo.yaml", "switch-8.yaml"]

D_R0 = "spark-1:rail0<->spark-2:rail0"
D_R1 = "spark-1:rail1<->spark-2:rail1"
D_PAIR = "spark-1<->spark-2"
NCCL_ALL_2 = {
    "test_nccl_completes",
    "test_nccl_uses_ib[spark-1]",
    "test_nccl_uses_ib[spark-2]",
    "test_nccl_busbw",
}
# Too slow to finish, but IB on both devices: the log kept at the deadline says so.
NCCL_SLOW = {"test_nccl_completes", "test_nccl_busbw"}
LEGS_4 = [(1, 2), (1, 4), (2, 3), (3, 4)]
"""The pairs `legs` measures on the 4-node demo: each node with its two ring neighbours."""
SW = [f"spark-{a}<->spark-{b}" for a, b in LEGS_4]
SW_RAILS = {
    f"test_rail_rdma[spark-{a}:rail{r}<->spark-{b}:rail{r}]" for r in (0, 1) for a, b in LEGS_4
}


def _touching(node: int) -> set[str]:
    """The RDMA and TCP items of the demo's measured pairs that include spark-`node`."""
    out: set[str] = set()
    for a, b in LEGS_4:
        if node in (a, b):
            pair = f"spark-{a}<->spark-{b}"
            out |= {f"test_pair_rdma[{pair}]", f"test_pair_tcp[{pair}]"}
            out |= {f"test_rail_rdma[spark-{a}:rail{r}<->spark-{b}:rail{r}]" for r in (0, 1)}
    return out


EXPECTED: dict[str, tuple[set[str], RuleId]] = {
    "nic_throttled": (
        {
            "test_nic_loopback[spark-1:rail0]",
            "test_nic_loopback[spark-1:rail1]",
            f"test_rail_rdma[{D_R0}]",
            f"test_rail_rdma[{D_R1}]",
            f"test_pair_rdma[{D_PAIR}]",
            f"test_pair_tcp[{D_PAIR}]",
            "test_nccl_busbw",
        },
        "nic_throttled",
    ),
    "half_port": (
        {
            "test_nic_loopback[spark-1:rail1]",
            f"test_rail_rdma[{D_R1}]",
            f"test_pair_rdma[{D_PAIR}]",
            f"test_pair_tcp[{D_PAIR}]",
        }
        | NCCL_SLOW,
        "half_port",
    ),
    "nccl_single_hca": (
        {"test_nccl_uses_ib[spark-1]", "test_nccl_uses_ib[spark-2]", "test_nccl_busbw"},
        "nccl_single_hca",
    ),
    "nccl_socket": ({"test_nccl_uses_ib[spark-2]", "test_nccl_busbw"}, "nccl_socket"),
    "link_down": (
        {
            f"test_rail_rdma[{D_R0}]",
            f"test_rail_rdma[{D_R1}]",
            f"test_pair_rdma[{D_PAIR}]",
            f"test_pair_tcp[{D_PAIR}]",
            "test_soak_load[spark-1]",
            "test_soak_load[spark-2]",
        }
        | NCCL_ALL_2,
        "link_down",
    ),
    "lane_degradation": (
        {f"test_soak_link[spark-2:rail{r}]" for r in (0, 1)},
        "marginal_cable",
    ),
    "hot_nic": ({"test_soak_load[spark-1]"}, "nic_overheated"),
    "switch_cpu_forwarding": (
        SW_RAILS
        | {f"test_pair_rdma[{p}]" for p in SW}
        | {f"test_pair_tcp[{p}]" for p in SW}
        | NCCL_SLOW,
        "switch_cpu_forwarding",
    ),
    "pfc_stall": (SW_RAILS | {f"test_pair_rdma[{p}]" for p in SW} | NCCL_SLOW, "pfc_stall"),
    "egress_cap": (_touching(3), "egress_rate_cap"),
}


@pytest.mark.parametrize("example", HEALTHY)
def test_healthy_example_passes(pytester: pytest.Pytester, example: str) -> None:
    path = write_cluster(pytester.path, example, changes=SHORT_SOAK)
    r = run_measurements(pytester, path)
    assert r.outcomes, r.stdout
    assert not r.not_passed, "\n\n".join(f"{k}:\n{r.messages[k]}" for k in sorted(r.not_passed))
    kinds = {k.split("[")[0] for k in r.outcomes}
    assert kinds >= {
        "test_nic_loopback",
        "test_rail_rdma",
        "test_pair_rdma",
        "test_pair_tcp",
        "test_nccl_completes",
        "test_nccl_uses_ib",
        "test_nccl_busbw",
        "test_soak_link",
        "test_soak_load",
    }
    # The schedule is in the results: every bandwidth item knows its round.
    assert all("round" in r.props[k] for k in r.outcomes if "rdma" in k or "tcp" in k)


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_fails_exactly_the_expected_tests(pytester: pytest.Pytester, fault: str) -> None:
    expected, rule = EXPECTED[fault]
    soak: dict[str, Any] = {} if fault == "lane_degradation" else SHORT_SOAK
    path = write_cluster(pytester.path, f"faults/{fault}.yaml", changes=soak)
    r = run_measurements(pytester, path)
    assert r.not_passed == expected, (
        f"unexpected: {sorted(r.not_passed - expected)}; missing: {sorted(expected - r.not_passed)}"
    )
    cause = RULES[rule].cause
    for name in sorted(expected):
        assert cause in r.messages[name], f"{name} does not name {rule}:\n{r.messages[name]}"


def test_half_port_message_reads_as_designed(pytester: pytest.Pytester) -> None:
    r = run_measurements(
        pytester, write_cluster(pytester.path, "faults/half_port.yaml", changes=SHORT_SOAK)
    )
    msg = r.messages[f"test_pair_rdma[{D_PAIR}]"]
    lines = msg.splitlines()
    # Both directions, each its own pair of rails (measured at once, each its own test).
    for head, way in ((0, "spark-1->spark-2"), (2, "spark-2->spark-1")):
        assert lines[head].startswith(f"both rails together {way}: ")
        assert lines[head].endswith("expected >= 180 Gb/s (default: NVIDIA Sync lower bound 184)")
        assert lines[head + 1].startswith("rail0 ") and " Gb/s, rail1 0." in lines[head + 1]
    assert lines[4].startswith("Likely cause: only one of the port's two PCIe halves")
    # Dead even in loopback: hardware, so a hardware fix, not NCCL_IB_HCA (which is set).
    assert "faulty hardware, not a setting" in lines[4]
    assert lines[5] == (
        "Fix: check the PCIe training of roceP2p1s0f1 (`lspci -vv` on its PCI function: "
        "LnkSta 32GT/s, Width x4), then power-drain the box (shut down, unplug power for 60 s); "
        "if the half stays dead, reseat or have the unit serviced."
    )


def test_two_faults_at_once_are_both_named(pytester: pytest.Pytester) -> None:
    faults = [{"fault": "nic_throttled", "node": "spark-1"}, {"fault": "nccl_socket"}]
    r = run_measurements(
        pytester, write_cluster(pytester.path, "direct-2.yaml", faults=faults, changes=SHORT_SOAK)
    )
    msg = r.messages["test_nccl_busbw"]
    assert RULES["nccl_socket"].cause in msg and RULES["nic_throttled"].cause in msg
    assert RULES["nic_throttled"].cause in r.messages[f"test_pair_rdma[{D_PAIR}]"]
    assert (
        "test_nccl_uses_ib[spark-1]" in r.not_passed
        and "test_nccl_uses_ib[spark-2]" in r.not_passed
    )


def test_progress_shows_the_schedule(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "demo.yaml", changes=SHORT_SOAK)
    r = run_measurements(pytester, path, "-k", "rdma")
    assert (
        "RDMA bandwidth (legs): 4 node pairs, both rails at once, in 2 rounds (both directions "
        "at once, each its own test) x 10 s (no node in two tests at once)" in r.stdout
    )
    # Round by round only where rounds take real time: the simulator's are over in a moment.
    assert "round 2/2:" not in r.stdout
    assert sorted({r.props[k]["round"] for k in r.outcomes if "pair_rdma" in k}) == ["1", "2"]


def test_examples_exist() -> None:
    for name in HEALTHY:
        assert (EXAMPLES / name).is_file(), name


@pytest.mark.parametrize("node", [1, 2, 4])
def test_egress_cap_on_any_node_is_named_with_its_direction(
    pytester: pytest.Pytester, node: int
) -> None:
    """Whichever node's leg is shaped, exactly its pairs fail, each naming the direction into it,
    and the bandwidth phase names that node as the suspect (not its partners)."""
    faults = [{"fault": "egress_cap", "node": f"spark-{node}", "value": 25000}]
    path = write_cluster(pytester.path, "faults/egress_cap.yaml", faults=faults, changes=SHORT_SOAK)
    r = run_measurements(pytester, path)
    expected = _touching(node)
    assert r.not_passed == expected, sorted(r.not_passed ^ expected)
    x = f"spark-{node}"
    for name in expected:
        message = r.messages[name]
        assert f"toward {x}" in message and RULES["egress_rate_cap"].fix in message, message
        if "rdma" in name:
            assert f"suspect {x} (its NIC port, its cable or its switch leg)" in message, message
        if "rail_rdma" in name:
            assert f"(into {x})" in message, message
