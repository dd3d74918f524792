"""The whole shipped suite on every fault example: exactly these tests fail, naming these causes.

One row per fault in examples/faults/. The per-concern tests (test_faults, test_measure)
pin the failing items one by one; this matrix guards against cross-talk between concerns, such
as a fault in one place failing checks of another with no cause named. A rule of "" is a test
that could not measure at all (the node is unreachable, or a tool hung): its message says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_sparkfabric.cluster.faults import FAULTS
from pytest_sparkfabric.report import schema
from tests.suite.runner import EXAMPLES, SuiteRun, run_suite
from tests.suite.test_causes import UNEXPLAINED_OK, check_causes

PINS = Path(__file__).resolve().parents[1] / "data" / "verdicts"
pytestmark = pytest.mark.slow

MATRIX: dict[str, tuple[set[str], set[str]]] = {
    "arp_flux": (
        {"test_arp_sysctls"},
        {"arp_flux"},
    ),
    "autoneg_failed": (
        {
            "test_jumbo_ping",
            "test_link",
            "test_nccl_busbw",
            "test_nccl_completes",
            "test_nccl_socket_ifname",
            "test_nccl_uses_ib",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
            "test_roce_port",
            "test_soak_load",
            "test_switch_leg",
        },
        {"", "autoneg_failed", "link_down"},
    ),
    "cable_swapped": (
        {
            "test_cabling",
            "test_jumbo_ping",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
            "test_soak_load",
        },
        {"", "miscabled"},
    ),
    "command_hangs": (
        {
            "test_cable_eeprom",
            "test_link",
            "test_rail_counters",
            "test_soak_counters",
            "test_soak_link",
            "test_versions_match",
        },
        {""},
    ),
    "duplicate_ip": (
        {
            "test_address_unique",
            "test_jumbo_ping",
            "test_nic_loopback",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_address",
            "test_rail_rdma",
            "test_soak_load",
        },
        {"", "duplicate_ip"},
    ),
    "eeprom_placeholder": (
        set(),
        set(),
    ),
    "firewall": (
        {"test_pair_rdma", "test_pair_tcp", "test_rail_rdma", "test_soak_load"},
        {"", "firewall"},
    ),
    "firmware_mismatch": (
        {"test_versions_match"},
        {"version_drift"},
    ),
    "half_port": (
        {
            "test_nccl_busbw",
            "test_nccl_completes",
            "test_nic_loopback",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
        },
        {"half_port"},
    ),
    "ipv6_enabled": (
        {"test_ipv6_disabled"},
        {"ipv6_enabled"},
    ),
    "hot_nic": (
        {"test_soak_load"},
        {"nic_overheated"},
    ),
    "lane_degradation": (
        {"test_soak_link"},
        {"marginal_cable"},
    ),
    "link_down": (
        {
            "test_jumbo_ping",
            "test_link",
            "test_nccl_busbw",
            "test_nccl_completes",
            "test_nccl_socket_ifname",
            "test_nccl_uses_ib",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
            "test_roce_port",
            "test_soak_load",
        },
        {"link_down"},
    ),
    "link_speed": (
        {"test_link", "test_pair_rdma", "test_pair_tcp", "test_rail_rdma"},
        {"speed_degraded"},
    ),
    "mtu": (
        {"test_jumbo_ping", "test_mtu"},
        {"mtu_local", "mtu_mismatch", "mtu_path"},
    ),
    "nccl_gid_index": (
        {"test_nccl_gid_index"},
        {"nccl_gid_index"},
    ),
    "nccl_single_hca": (
        {"test_nccl_busbw", "test_nccl_ib_hca", "test_nccl_uses_ib"},
        {"nccl_single_hca"},
    ),
    "nccl_socket_ifname": (
        {"test_nccl_busbw", "test_nccl_completes", "test_nccl_socket_ifname"},
        {"nccl_socket_ifname"},
    ),
    "nccl_socket": (
        {"test_nccl_busbw", "test_nccl_transport", "test_nccl_uses_ib"},
        {"nccl_socket"},
    ),
    "nic_throttled": (
        {
            "test_nccl_busbw",
            "test_nic_loopback",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
        },
        {"nic_throttled"},
    ),
    "node_unreachable": (
        {
            "test_cable_eeprom",
            "test_cabling",
            "test_address_unique",
            "test_arp_sysctls",
            "test_ipv6_disabled",
            "test_host_qos",
            "test_jumbo_ping",
            "test_link",
            "test_mtu",
            "test_nccl_busbw",
            "test_nccl_completes",
            "test_nccl_gid_index",
            "test_nccl_ib_hca",
            "test_nccl_socket_ifname",
            "test_nccl_transport",
            "test_nccl_uses_ib",
            "test_nic_loopback",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_pcie",
            "test_rail_address",
            "test_rail_counters",
            "test_rail_rdma",
            "test_rail_subnet",
            "test_roce_port",
            "test_rocev2_gid",
            "test_rp_filter",
            "test_soak_counters",
            "test_soak_link",
            "test_soak_load",
            "test_versions_match",
        },
        {""},
    ),
    "phy_counters_missing": (
        {"test_soak_link"},
        {""},
    ),
    "egress_cap": (
        {"test_pair_rdma", "test_pair_tcp", "test_rail_rdma"},
        {"egress_rate_cap"},
    ),
    "pcie_width": (
        {
            "test_nccl_busbw",
            "test_nic_loopback",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_pcie",
            "test_rail_rdma",
        },
        {"pcie_degraded"},
    ),
    "pfc_stall": (
        {
            "test_nccl_busbw",
            "test_nccl_completes",
            "test_pair_rdma",
            "test_rail_rdma",
            "test_switch_leg_counters",
            "test_switch_qos",
        },
        {"pfc_stall"},
    ),
    "host_pfc": (
        {"test_switch_qos"},
        {"pfc_mismatch"},
    ),
    "rx_discards": (
        {"test_rail_counters", "test_soak_counters"},
        {"rx_discards"},
    ),
    "ring_order": (
        {
            "test_cabling",
            "test_jumbo_ping",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
            "test_soak_load",
        },
        {"", "miscabled"},
    ),
    "rp_filter_strict": (
        {"test_rp_filter"},
        {"rp_filter_strict"},
    ),
    "switch_cpu_forwarding": (
        {
            "test_nccl_busbw",
            "test_nccl_completes",
            "test_pair_rdma",
            "test_pair_tcp",
            "test_rail_rdma",
            "test_switch_bridge",
            "test_switch_bridge_port",
            "test_switch_cpu_under_traffic",
        },
        {"switch_cpu_forwarding"},
    ),
    "switch_fcs_errors": (
        {"test_switch_leg_counters"},
        {"post_fec_errors"},
    ),
}


def _run(pytester: pytest.Pytester, cluster: Path) -> SuiteRun:
    return run_suite(pytester, cluster, "-p", "no:html", "-q")


def _injected(fault: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((EXAMPLES / "faults" / f"{fault}.yaml").read_text())
    return list(data["simulate"]["faults"])


def _assert_verdict_names_the_faults(run: SuiteRun, fault: str, rules: set[str]) -> None:
    """The results' verdict, and one root cause per injected fault, of a rule the fault's row
    allows ("" there: the cause is that something could not be measured), at its node."""
    doc, injected = run.doc, _injected(fault)
    assert schema.problems(doc) == []
    failed = [i for i in doc["items"] if i["outcome"] == "failed"]
    unmeasured = [i for i in doc["items"] if i["outcome"] == "not_measured"]
    if not failed and not unmeasured:
        assert (doc["verdict"], doc["causes"]) == ("accepted", []), doc["causes"]
        return
    assert doc["verdict"] == ("rejected" if failed else "incomplete")
    causes = doc["causes"]
    allowed = {r or "not_measured" for r in rules} | {"node_unreachable"}
    assert causes and all(c["rule"] in allowed for c in causes), causes
    # Each injected fault is named at its node (a cause per object it broke: tests/suite/
    # test_causes.py pins which); every failure is explained but the few that may stay so.
    for spec in injected:
        if spec.get("node"):
            assert any(spec["node"] in o for c in causes for o in c["objects"]), causes
    explained = {i for c in causes for i in c["items"]}
    loose = {i["id"] for i in failed + unmeasured} - explained
    assert {i.split("::")[-1].split("[")[0] for i in loose} <= UNEXPLAINED_OK, loose


def _pin(name: str, tests: list[dict[str, object]]) -> None:
    """Every item's outcome and rule, as pinned in tests/data/verdicts/NAME.json.

    A refactor must leave these identical; a change that means to alter a verdict regenerates
    the pins with SPARKFABRIC_UPDATE_PINS=1 and shows the difference in review."""
    seen: dict[str, str] = {}
    for t in tests:
        key = str(t["nodeid"]).rsplit("/", 1)[-1]
        props = t["properties"] if isinstance(t["properties"], dict) else {}
        rule = str(props.get("rule", ""))
        seen[key] = f"{t['outcome']} {rule}".strip()
    path = PINS / f"{name}.json"
    if os.environ.get("SPARKFABRIC_UPDATE_PINS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(path.read_text())
    changed = {k: (pinned.get(k), seen.get(k)) for k in set(pinned) | set(seen)}
    assert {k: v for k, v in changed.items() if v[0] != v[1]} == {}


def test_every_fault_has_a_row() -> None:
    assert set(MATRIX) == set(FAULTS) == {p.stem for p in (EXAMPLES / "faults").glob("*.yaml")}


@pytest.mark.parametrize("fault", sorted(MATRIX))
def test_fault_fails_exactly_the_expected_tests(pytester: pytest.Pytester, fault: str) -> None:
    run = _run(pytester, EXAMPLES / "faults" / f"{fault}.yaml")
    tests = run.tests
    # One run per example: its root causes are checked here too (tests/suite/test_causes.py).
    check_causes(f"faults/{fault}", run)
    failed = [t for t in tests if t["outcome"] == "failed"]
    functions = {str(t["nodeid"]).split("::")[1].split("[")[0] for t in failed}
    props = [t["properties"] for t in failed]
    rules = {str(p.get("rule", "")) for p in props if isinstance(p, dict)}
    want_functions, want_rules = MATRIX[fault]
    _pin(f"fault-{fault}", tests)
    assert functions == want_functions
    assert rules == want_rules
    _assert_verdict_names_the_faults(run, fault, want_rules)
    if fault == "eeprom_placeholder":
        # Advisory only: nothing fails, but the report says the EEPROM cannot be trusted.
        advisories = [
            str(t["properties"].get("advisory", ""))
            for t in tests
            if isinstance(t["properties"], dict)
        ]
        assert any("placeholder" in a for a in advisories), advisories
    for t in failed:
        message = str(t["message"])
        # Every failure says where (a node, the switch, or the cluster-wide NCCL run) and,
        # with a rule, the fix.
        assert any(w in message for w in ("spark-", "switch ", "NCCL ")), message
        if isinstance(t["properties"], dict) and t["properties"].get("rule"):
            assert "Fix: " in message, message


@pytest.mark.parametrize(
    "example", ["demo.yaml", "direct-2.yaml", "mesh-3.yaml", "ring-4.yaml", "switch-8.yaml"]
)
def test_healthy_example_passes_the_whole_suite(pytester: pytest.Pytester, example: str) -> None:
    run = _run(pytester, EXAMPLES / example)
    tests = run.tests
    assert tests
    assert (run.doc["verdict"], run.doc["causes"]) == ("accepted", [])
    _pin(example.removesuffix(".yaml"), tests)
    bad = {t["nodeid"]: t["message"] for t in tests if t["outcome"] not in ("passed", "skipped")}
    assert not bad
