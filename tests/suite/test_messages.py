"""How measurement failures read: two faults at once, a shaped switch leg on any node, and the
schedule in the progress lines (the matrix pins which checks fail, SAYS a dead PCIe half)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES
from tests.suite.runner import SHORT_SOAK, run_measurements, write_cluster

D_PAIR = "spark-1<->spark-2"
LEGS_4 = [(1, 2), (1, 4), (2, 3), (3, 4)]
"""The pairs `legs` measures on the 4-node demo: each node with its two ring neighbours."""


def _touching(node: int) -> set[str]:
    """The RDMA and TCP items of the demo's measured pairs that include spark-`node`."""
    out: set[str] = set()
    for a, b in LEGS_4:
        if node in (a, b):
            pair = f"spark-{a}<->spark-{b}"
            out |= {f"test_pair_rdma[{pair}]", f"test_pair_tcp[{pair}]"}
            out |= {f"test_rail_rdma[spark-{a}:rail{r}<->spark-{b}:rail{r}]" for r in (0, 1)}
    return out


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


@pytest.mark.parametrize("node", [1, 2, 4])
def test_egress_cap_on_any_node_is_named_with_its_direction(
    pytester: pytest.Pytester, node: int
) -> None:
    """Whichever node's leg is shaped, exactly its pairs fail, each naming the direction into it,
    and the bandwidth phase names that node as the suspect (not its partners); the schedule in
    the progress lines is the plan's."""
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
