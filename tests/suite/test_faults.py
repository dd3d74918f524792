"""Each injected fault fails exactly the expected items, each with its cause and fix.

Host faults run on the two-node direct cluster, switch faults on the first three nodes of the
demo (a switched cluster). Every failed item names its node and carries the diagnosis rule
the table expects; no other item fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES, RuleId
from tests.suite.runner import CONFIG, run_suite, write_cluster

pytestmark = pytest.mark.slow

DIRECT = ("spark-1", "spark-2")
SWITCHED = ("spark-1", "spark-2", "spark-3")


def per_rail(test: str, node: str, rails: tuple[int, ...] = (0, 1)) -> list[str]:
    return [f"{test}[{node}:rail{r}]" for r in rails]


def pings(nodes: tuple[str, ...], touching: str, rails: tuple[int, ...] = (0, 1)) -> list[str]:
    """Every directed jumbo ping from or to `touching` (switch plan: every pair is a link)."""
    out = []
    for r in rails:
        for other in nodes:
            if other != touching:
                out.append(f"test_jumbo_ping[{touching}:rail{r}->{other}:rail{r}]")
                out.append(f"test_jumbo_ping[{other}:rail{r}->{touching}:rail{r}]")
    return out


def rule(rule_id: RuleId, *items: list[str] | str) -> dict[str, RuleId]:
    out: dict[str, RuleId] = {}
    for group in items:
        for item in [group] if isinstance(group, str) else group:
            out[item] = rule_id
    return out


@dataclass(frozen=True)
class Case:
    id: str
    base: str
    faults: list[dict[str, Any]]
    expected: dict[str, RuleId]  # failed item -> diagnosis rule
    nodes: int | None = None
    changes: dict[str, Any] = field(default_factory=dict)


NO_JOB_HCA = {"nccl": {"env": {"NCCL_DEBUG": "INFO"}}}

CASES = [
    Case(
        "link_down",
        "direct-2.yaml",
        [{"fault": "link_down", "node": "spark-1"}],
        # One cable: both ends lose carrier, both RoCE ports go DOWN, no ping crosses it.
        rule(
            "link_down",
            *(per_rail(t, n) for t in ("test_link", "test_roce_port") for n in DIRECT),
            pings(DIRECT, "spark-1"),
            # NCCL_SOCKET_IFNAME names the fabric netdev (NVIDIA's two-node playbook).
            [f"test_nccl_socket_ifname[{n}]" for n in DIRECT],
        ),
    ),
    Case(
        "mtu_node",
        "direct-2.yaml",
        [{"fault": "mtu", "node": "spark-1", "rail": 0, "value": 1500}],
        {
            "test_mtu[spark-1:rail0]": "mtu_mismatch",
            "test_jumbo_ping[spark-1:rail0->spark-2:rail0]": "mtu_local",
            "test_jumbo_ping[spark-2:rail0->spark-1:rail0]": "mtu_path",
        },
    ),
    Case(
        "duplicate_ip",
        "direct-2.yaml",
        [{"fault": "duplicate_ip", "node": "spark-1", "rail": 0}],
        # spark-1 rail0 took spark-2's address: both hold it, spark-1's own is gone.
        rule(
            "duplicate_ip",
            "test_rail_address[spark-1:rail0]",
            "test_address_unique[spark-1:rail0]",
            "test_address_unique[spark-2:rail0]",
            "test_jumbo_ping[spark-2:rail0->spark-1:rail0]",
        ),
    ),
    Case(
        "rp_filter_strict",
        "direct-2.yaml",
        [{"fault": "rp_filter_strict", "node": "spark-1", "rail": 1}],
        # conf.all.rp_filter=1 too, but rail 0 keeps its own 2 and the kernel takes the max.
        {"test_rp_filter[spark-1:rail1]": "rp_filter_strict"},
    ),
    Case(
        "ipv6_enabled",
        "direct-2.yaml",
        [{"fault": "ipv6_enabled", "node": "spark-2"}],
        rule("ipv6_enabled", per_rail("test_ipv6_disabled", "spark-2")),
    ),
    Case(
        "nccl_socket",
        "direct-2.yaml",
        [{"fault": "nccl_socket", "node": "spark-1"}],
        {"test_nccl_transport[spark-1]": "nccl_socket"},
    ),
    Case(
        "nccl_single_hca",
        "direct-2.yaml",
        [{"fault": "nccl_single_hca"}],
        rule("nccl_single_hca", [f"test_nccl_ib_hca[{n}]" for n in DIRECT]),
        changes=NO_JOB_HCA,
    ),
    Case(
        # The job environment (cluster.yaml nccl.env) sets NCCL_IB_HCA to both rails: NCCL
        # never reads the /etc/nccl.conf line, so nothing fails.
        "nccl_single_hca_shadowed_by_job_env",
        "direct-2.yaml",
        [{"fault": "nccl_single_hca"}],
        {},
    ),
    Case(
        "pcie_width",
        "direct-2.yaml",
        [{"fault": "pcie_width", "node": "spark-2", "rail": 1}],
        {"test_pcie[spark-2:rail1]": "pcie_degraded"},
    ),
    Case(
        # Rails in separate subnets on separate cables: no ARP flux is possible.
        "arp_flux_direct",
        "direct-2.yaml",
        [{"fault": "arp_flux", "node": "spark-1"}],
        {},
    ),
    Case(
        # Through a switch both rails share one L2 network: flux needs the sysctls.
        "arp_flux",
        "demo.yaml",
        [{"fault": "arp_flux", "node": "spark-3"}],
        {"test_arp_sysctls[spark-3]": "arp_flux"},
        nodes=3,
    ),
    Case(
        "link_down_switch",
        "demo.yaml",
        [{"fault": "link_down", "node": "spark-2"}],
        rule(
            "link_down",
            per_rail("test_link", "spark-2"),
            per_rail("test_roce_port", "spark-2"),
            pings(SWITCHED, "spark-2"),
            "test_switch_leg[spark-2]",
            "test_nccl_socket_ifname[spark-2]",
        ),
        nodes=3,
    ),
    Case(
        "mtu_switch_port",
        "demo.yaml",
        [{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}],
        rule("mtu_path", pings(SWITCHED, "spark-2"), "test_switch_leg_mtu[spark-2]"),
        nodes=3,
    ),
    Case(
        "autoneg_failed",
        "demo.yaml",
        [{"fault": "autoneg_failed", "switch_port": "qsfp56-dd-1-5"}],
        # The leg stays down: the hosts see no link, and the switch says why.
        rule(
            "autoneg_failed",
            per_rail("test_link", "spark-2"),
            per_rail("test_roce_port", "spark-2"),
            pings(SWITCHED, "spark-2"),
            "test_switch_leg[spark-2]",
            "test_nccl_socket_ifname[spark-2]",
        ),
        nodes=3,
    ),
    Case(
        "switch_cpu_forwarding",
        "demo.yaml",
        [{"fault": "switch_cpu_forwarding"}],
        # One spare sub-port in the bridge turns offload off for every port of it.
        rule(
            "switch_cpu_forwarding",
            [f"test_switch_bridge_port[{n}]" for n in SWITCHED],
            "test_switch_bridge",
        ),
        nodes=3,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fault_fails_exactly_the_expected_items(pytester: pytest.Pytester, case: Case) -> None:
    path = write_cluster(
        pytester.path, case.base, faults=case.faults, nodes=case.nodes, changes=case.changes
    )
    run = run_suite(pytester, path, markers=CONFIG)
    assert run.failed == set(case.expected), {k: run.messages[k] for k in run.failed}
    assert run.ret == (1 if case.expected else 0)
    for item, rule_id in case.expected.items():
        message, props = run.messages[item], run.props[item]
        assert props.get("rule") == rule_id, (item, message)
        if "[" in item:  # a node's item: its node leads the message
            node = item[item.index("[") + 1 : -1].split(":")[0]
            assert props["node"] == node and message.startswith(node), (item, message)
        # What was measured, what was expected, the cause and the one-line fix.
        assert props.get("measured") and props.get("expected"), (item, props)
        assert f"Likely cause: {RULES[rule_id].cause}" in message
        fix = props.get("fix", "")
        assert fix and f"Fix: {fix}" in message, (item, message)
        if fix != RULES[rule_id].fix:
            # A check that knows the exact setting names the node, the setting and its place.
            assert fix.startswith(f"on {props['node']}, "), fix
