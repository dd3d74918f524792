"""The healthy example of every topology passes every configuration check."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.cluster.plan import plan
from pytest_sparkfabric.measure import bwplan
from tests.suite.runner import CONFIG, EXAMPLES, run_suite

pytestmark = pytest.mark.slow

EXAMPLE_FILES = ("direct-2.yaml", "mesh-3.yaml", "ring-4.yaml", "switch-8.yaml", "demo.yaml")
PER_RAIL = (
    "test_link",
    "test_pcie",
    "test_roce_port",
    "test_mtu",
    "test_rail_address",
    "test_address_unique",
    "test_rail_subnet",
    "test_rp_filter",
    "test_ipv6_disabled",
    "test_rocev2_gid",
)
PER_NODE = (
    "test_arp_sysctls",
    "test_nccl_transport",
    "test_nccl_ib_hca",
    "test_cable_eeprom",
    "test_host_qos",
    "test_cabling",
    "test_nccl_gid_index",
    "test_nccl_socket_ifname",
)
PER_LEG = ("test_switch_leg", "test_switch_leg_mtu", "test_switch_bridge_port", "test_switch_qos")


@pytest.mark.parametrize("example", EXAMPLE_FILES)
def test_healthy_example_passes(pytester: pytest.Pytester, example: str) -> None:
    path = EXAMPLES / example
    cluster = load_cluster(path)
    run = run_suite(pytester, path, markers=CONFIG)
    bad = {k: run.messages[k] for k, v in run.outcomes.items() if v not in ("passed", "skipped")}
    assert not bad, bad
    assert run.ret == 0
    # Every item is there: one per rail, node, directed link (and switch leg) ...
    expected = {f"{t}[{r.id}]" for t in PER_RAIL for r in cluster.rails}
    expected |= {f"{t}[{n.name}]" for t in PER_NODE for n in cluster.nodes}
    # The pings follow the bandwidth schedule's pairs (legs: each node with two partners).
    expected |= {f"test_jumbo_ping[{d.id}]" for d in bwplan.directed_links(cluster, plan(cluster))}
    switched = cluster.spec.switch is not None
    legs = {f"{t}[{n.name}]" for t in PER_LEG for n in cluster.nodes}
    legs |= {"test_switch_bridge", "test_switch_resource"}
    assert set(run.outcomes) == expected | legs | {"test_versions_match"}
    # ... and only the switch checks skip, where there is no switch.
    assert run.with_outcome("skipped") == (set() if switched else legs)
    # Passing items still say what they measured and expected.
    ping = next(k for k in run.outcomes if k.startswith("test_jumbo_ping["))
    assert run.props[ping]["measured"].startswith("3/3 replies")
    assert run.props[ping]["expected"] == (f"DF {cluster.mtu - 28}-byte ping answered, loss <= 0 %")
