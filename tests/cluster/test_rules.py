"""Every cabling, addressing and cross-reference rule, one broken file each."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from pytest_sparkfabric.cluster import Cluster, ConfigError, parse_cluster, plan, rules
from pytest_sparkfabric.cluster.filefacts import RuleProblem, facts_of, facts_of_data
from pytest_sparkfabric.cluster.model import build_nodes
from pytest_sparkfabric.cluster.source import format_path
from pytest_sparkfabric.cluster.spec import ClusterSpec
from tests.cluster.samples import DIRECT, MESH, RING, SIM, SWITCH, VALID


def load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def problems(data: dict[str, Any] | str) -> list[str]:
    """`path message` of every problem, as the user reads them (without line and fix)."""
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    with pytest.raises(ConfigError) as info:
        parse_cluster(text)
    return [f"{format_path(p.path)} {p.message}" for p in info.value.problems]


def only(data: dict[str, Any] | str) -> str:
    found = problems(data)
    assert len(found) == 1, found
    return found[0]


def valid(data: dict[str, Any] | str) -> Cluster:
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    return parse_cluster(text)


# -- valid files ------------------------------------------------------------------------------


def test_long_form_rail_and_quoted_port_keys() -> None:
    cluster = valid(SWITCH)
    rail = cluster.node("spark-1").rail(1, 0)
    assert (rail.netdev, rail.rdma, rail.pci) == ("enp1s0f1np1", "rocep1s0f1", "0000:01:00.1")
    data = load(DIRECT)
    data["nodes"][0]["ports"] = {"1": data["nodes"][0]["ports"][1]}
    assert valid(data).node("spark-1").ports == (1,)
    custom = load(DIRECT)
    custom["nodes"][1]["ports"][1][1] = {"address": "192.168.101.12/24", "netdev": "fab1"}
    assert valid(custom).node("spark-2").rail(1, 1).netdev == "fab1"


def test_sim_needs_no_ssh_and_accepts_faults() -> None:
    cluster = valid(SIM)
    assert cluster.spec.simulate is not None
    assert [f.fault for f in cluster.spec.simulate.faults] == ["link_down", "lane_degradation"]


# -- node counts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "topo", "count", "expected"),
    [
        (DIRECT, "mesh", 2, "topology 'mesh' needs exactly 3 nodes (a Spark has 2 ports); got 2"),
        (MESH, "ring", 3, "topology 'ring' needs 4 or more nodes (a Spark has 2 ports); got 3"),
        (MESH, "direct", 3, "topology 'direct' needs exactly 2 nodes (a Spark has 2 ports); got 3"),
        (RING, "mesh", 4, "topology 'mesh' needs exactly 3 nodes (a Spark has 2 ports); got 4"),
    ],
)
def test_node_counts(text: str, topo: str, count: int, expected: str) -> None:
    data = load(text)
    data["topology"] = topo
    found = problems(data)
    assert expected in found
    assert len(data["nodes"]) == count


def test_switch_holds_at_most_128() -> None:
    data = load(SWITCH)
    nodes = []
    for i in range(129):
        nodes.append(
            {
                "name": f"s{i}",
                "ssh": {"host": f"h{i}"},
                "ports": {1: [f"192.168.100.{2 + i}/24", f"192.168.101.{2 + i}/24"]},
            }
        )
    data["nodes"] = nodes
    data["switch"]["ports"] = {f"s{i}": f"p{i}" for i in range(129)}
    data["nccl"].pop("launch_node")
    assert only(data) == "topology 'switch' needs 2 to 128 nodes (one switch leg per node); got 129"


# -- names, hosts, addresses --------------------------------------------------------------------


def test_unique_names_and_hosts() -> None:
    data = load(RING)
    data["nodes"][2]["name"] = "spark-1"
    data["nodes"][3]["ssh"]["host"] = "10.0.0.12"
    assert problems(data) == [
        "nodes[2].name 'spark-1' is already the name of nodes[0]",
        "nodes[3].ssh.host 10.0.0.12 is already the ssh host of nodes[1]",
    ]


def test_same_host_on_other_ssh_ports_is_fine() -> None:
    data = load(DIRECT)
    data["nodes"][1]["ssh"] = {"host": "10.0.0.11", "port": 2222}
    valid(data)


def test_unique_addresses_across_nodes() -> None:
    data = load(DIRECT)
    data["nodes"][1]["ports"][1][1] = "192.168.101.11/24"
    assert only(data) == (
        "nodes[1].ports.1[1] 192.168.101.11/24 is already used by nodes[0].ports.1[1]"
    )


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("192.168.100.12/32", "192.168.100.12/32 is not a usable host address of its subnet"),
        ("192.168.100.0/24", "192.168.100.0/24 is not a usable host address of its subnet"),
        ("192.168.100.255/24", "192.168.100.255/24 is not a usable host address of its subnet"),
    ],
)
def test_usable_host_addresses(address: str, expected: str) -> None:
    data = load(DIRECT)
    data["nodes"][1]["ports"][1][0] = address
    assert f"nodes[1].ports.1[0] {expected}" in problems(data)


# -- cabling ------------------------------------------------------------------------------------


def test_direct_same_port_number_at_both_ends() -> None:
    data = load(DIRECT)
    data["nodes"][1]["ports"] = {0: data["nodes"][1]["ports"][1]}
    assert only(data) == "nodes[1].ports uses port 0; nodes[0] uses port 1"


def test_direct_node_has_one_cabled_port() -> None:
    data = load(DIRECT)
    data["nodes"][0]["ports"][0] = ["192.168.102.11/24", "192.168.103.11/24"]
    assert only(data) == "nodes[0].ports lists ports 0 and 1; a direct node has one cabled port"


def test_ring_node_uses_both_ports() -> None:
    data = load(RING)
    del data["nodes"][2]["ports"][0]
    assert only(data) == "nodes[2].ports lists port 1; a ring node is cabled on both ports 0 and 1"


def test_mesh_cabled_port_0_to_port_1_of_the_next() -> None:
    data = load(MESH)
    # spark-2's port 1 carries addresses of another subnet than spark-1's port 0.
    data["nodes"][1]["ports"][1] = ["192.168.110.12/24", "192.168.111.12/24"]
    assert problems(data) == [
        "nodes[1].ports.1[0] 192.168.110.12/24 is not in 192.168.100.0/24, the subnet of the "
        "other end of its cable, spark-1:p0rail0 (192.168.100.11/24)",
        "nodes[1].ports.1[1] 192.168.111.12/24 is not in 192.168.101.0/24, the subnet of the "
        "other end of its cable, spark-1:p0rail1 (192.168.101.11/24)",
    ]


def test_ring_listed_backwards_gets_the_cable_order() -> None:
    data = load(RING)
    data["nodes"] = [data["nodes"][i] for i in (0, 3, 2, 1)]
    assert only(data) == (
        "nodes are not listed in cable order: by their addresses, port 0 of spark-1 is cabled "
        "to port 1 of spark-2, not of spark-4"
    )


def test_ring_cable_subnets_are_not_reused() -> None:
    data = load(RING)
    # cable spark-3 -> spark-4 takes the subnets of cable spark-1 -> spark-2 (no node shared).
    data["nodes"][2]["ports"][0] = ["192.168.100.13/24", "192.168.101.13/24"]
    data["nodes"][3]["ports"][1] = ["192.168.100.14/24", "192.168.101.14/24"]
    assert problems(data) == [
        "nodes[2].ports.0[0] 192.168.100.13/24 is in 192.168.100.0/24, already the subnet of "
        "rail 0 of cable spark-1:p0<->spark-2:p1",
        "nodes[2].ports.0[1] 192.168.101.13/24 is in 192.168.101.0/24, already the subnet of "
        "rail 1 of cable spark-1:p0<->spark-2:p1",
    ]


def test_switch_rules() -> None:
    data = load(SWITCH)
    data["nodes"][2]["ports"] = {0: data["nodes"][2]["ports"][1]}
    assert only(data) == "nodes[2].ports uses port 0; the other nodes use port 1"
    data = load(SWITCH)
    del data["switch"]
    assert (
        only(data) == "topology 'switch' needs a switch: section that names each node's switch port"
    )
    data = load(SWITCH)
    data["switch"]["ports"]["spark-3"] = "qsfp56-dd-1-1"
    assert only(data) == "switch.ports.spark-3 qsfp56-dd-1-1 is already the switch port of spark-1"
    data = load(DIRECT)
    data["switch"] = load(SWITCH)["switch"]
    assert only(data) == "switch is only for topology 'switch'; this file says 'direct'"


def test_switch_subnet_per_rail() -> None:
    data = load(SWITCH)
    data["nodes"][1]["ports"][1][1] = "192.168.111.12/24"
    assert only(data) == (
        "nodes[1].ports.1[1] 192.168.111.12/24 is not in 192.168.101.0/24, the rail 1 subnet "
        "of spark-1 (192.168.101.11/24)"
    )


# -- ARP flux and arp_sysctls -------------------------------------------------------------------


def _one_subnet_switch() -> dict[str, Any]:
    data = load(SWITCH)
    for i, node in enumerate(data["nodes"]):
        node["ports"][1] = [f"192.168.100.{11 + i}/24", f"192.168.100.{21 + i}/24"]
    return data


def test_two_rails_of_a_node_in_one_subnet() -> None:
    assert problems(_one_subnet_switch()) == [
        "nodes[0].ports.1[1] 192.168.100.21/24 is in 192.168.100.0/24 like nodes[0].ports.1[0] "
        "(192.168.100.11/24) (so do spark-2, spark-3): two interfaces of one node in one subnet "
        "cause ARP flux and rp_filter drops"
    ]


def test_arp_sysctls_allows_one_shared_subnet() -> None:
    data = _one_subnet_switch()
    data["arp_sysctls"] = True
    assert len(plan.plan(valid(data)).subnets) == 1


def test_arp_sysctls_does_not_join_two_cables() -> None:
    data = load(RING)
    data["arp_sysctls"] = True
    data["nodes"][0]["ports"][1] = ["192.168.100.21/24", "192.168.101.21/24"]
    data["nodes"][3]["ports"][0] = ["192.168.100.24/24", "192.168.101.24/24"]
    found = problems(data)
    assert found[0].startswith("nodes[3].ports.0[0] 192.168.100.24/24 is in 192.168.100.0/24, ")


# -- transports and references ------------------------------------------------------------------


def test_ssh_transport_needs_ssh() -> None:
    data = load(DIRECT)
    del data["nodes"][1]["ssh"]
    assert only(data) == "nodes[1] (spark-2) has no ssh: and transport is 'ssh'"
    data["transport"] = "sim"
    valid(data)


def test_replay_needs_replay_dir() -> None:
    data = load(DIRECT)
    data["transport"] = "replay"
    assert only(data) == "transport 'replay' needs replay_dir: the folder of a recording"
    data["replay_dir"] = "runs/2026-11-29"
    valid(data)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ({"fault": "link_down"}, "simulate.faults[0].fault 'link_down' needs 'node'"),
        (
            {"fault": "link_down", "node": "spark-9"},
            "simulate.faults[0].node 'spark-9' is not a node of this file",
        ),
        (
            {"fault": "nic_throttled", "node": "spark-1", "lane": 2},
            "simulate.faults[0].lane is not used by fault 'nic_throttled'",
        ),
        (
            {"fault": "pfc_stall"},
            "simulate.faults[0].fault 'pfc_stall' needs topology 'switch'; this file says 'direct'",
        ),
        (
            {"fault": "link_down", "node": "spark-1", "port": 0},
            "simulate.faults[0].port 0 is not a cabled port of spark-1",
        ),
        (
            {"fault": "autoneg_failed", "switch_port": "x"},
            "simulate.faults[0].switch_port 'x' is not a switch port of this file",
        ),
    ],
)
def test_fault_targets(fault: dict[str, Any], expected: str) -> None:
    data = load(SIM)
    data["simulate"]["faults"] = [fault]
    assert expected in problems(data)


def test_nccl_launch_node_and_thresholds_names() -> None:
    data = load(SWITCH)
    data["nccl"]["launch_node"] = "spark-4"
    data["thresholds"] = {"pair_rdma_gbps": 170, "bogus": 1}
    assert problems(data) == [
        "thresholds.bogus is not a known threshold",
        "nccl.launch_node 'spark-4' is not a node of this file (did you mean 'spark-3'?)",
    ]


# -- broken shape does not hide the rules that can still run ------------------------------------


def test_rules_still_run_when_shape_is_broken() -> None:
    data = load(RING)
    data["mtu"] = "jumbo"
    data["nodes"][3]["name"] = "spark-1"
    data["nodes"][3]["ports"][0][0] = "192.168.100.11/24"
    data["thresholds"] = {"rail_rdma_gbsp": 90}
    assert problems(data) == [
        "mtu must be a whole number; got 'jumbo'",
        "nodes[3].name 'spark-1' is already the name of nodes[0]",
        "nodes[3].ports.0[0] 192.168.100.11/24 is already used by nodes[0].ports.0[0]",
        "thresholds.rail_rdma_gbsp is not a known threshold (did you mean 'rail_rdma_gbps'?)",
    ]


def shape_valid(data: dict[str, Any]) -> Cluster | None:
    """The Cluster of data whose shape validates, before (and whatever) the rules say."""
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError:
        return None
    return Cluster(spec=spec, source=None, nodes=build_nodes(spec))


def facts_problems_agree(data: dict[str, Any]) -> list[RuleProblem] | None:
    """Assert the rules read the same facts from raw data as from the validated cluster."""
    cluster = shape_valid(data)
    if cluster is None:
        return None
    from_cluster = rules._check_facts(facts_of(cluster))
    from_data = rules._check_facts(facts_of_data(data))
    assert from_cluster == from_data
    return from_cluster[0]


@pytest.mark.parametrize("name", sorted(VALID))
def test_raw_and_valid_facts_agree(name: str) -> None:
    data = load(VALID[name])
    assert facts_problems_agree(data) == []
    first, second = data["nodes"][0], data["nodes"][-1]
    second["ports"][min(second["ports"])][0] = first["ports"][min(first["ports"])][0]
    second["name"] = first["name"]
    messages = [p.message for p in facts_problems_agree(data) or []]
    assert any("is already used by" in m for m in messages)
    assert any("is already the name of" in m for m in messages)
