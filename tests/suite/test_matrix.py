"""The fault matrix: the whole shipped suite once on every example cluster (healthy, `faults/`
one fault each, `mixed/` two or three). tests/data/matrix.json pins per example the verdict, the
number of checks, every check that did not pass (outcome, rule) and the root causes (rule,
objects, checks explained); SAYS what some failures say. To alter a verdict, regenerate with
SPARKFABRIC_UPDATE_PINS=1 (runner.pin) and show the difference in review. On every run: each
failure says where and, with a rule, the fix; a cause blames only objects on its checks' paths;
each fault is named at its node; every check that did not pass is explained (but a few)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from pytest_sparkfabric import objects
from pytest_sparkfabric.results import Results
from tests.suite.runner import EXAMPLES, pin, run_suite, says, write_cluster

NAMES = sorted(
    str(p.relative_to(EXAMPLES).with_suffix(""))
    for pattern in ("*.yaml", "faults/*.yaml", "mixed/*.yaml")
    for p in EXAMPLES.glob(pattern)
    if p.name != "cluster.example.yaml"
)
UNEXPLAINED_OK = {"test_soak_load"}
"""Checks that may stay unexplained: a soak partner whose traffic another node's fault lost."""
ONE_CAUSE = {
    "faults/cable_swapped": "exchange the two cables in spark-2 port 0 and port 1",
    "faults/ring_order": "re-cable the ring in the order spark-1, spark-2, spark-3, spark-4: ",
    "faults/link_speed": "",
    "faults/egress_cap": "",
    "faults/firewall": "",
    "faults/rx_discards": "",
}
"""Faults of one physical thing, whatever number of objects shows them: exactly one root cause,
its fix starting so (issue 26)."""
SOAK_LINK = "test_soak.py::test_soak_link[spark-2:rail{}]"
SAYS: dict[str, dict[str, tuple[str, ...]]] = {
    "faults/half_port": {
        "test_bandwidth.py::test_pair_rdma[spark-1<->spark-2]": (
            # both directions, each its own pair of rails
            "^both rails together spark-1->spark-2: ", "\nboth rails together spark-2->spark-1: ",
            "expected >= 180 Gb/s (default: NVIDIA Sync lower bound 184)\nrail0 ",
            " Gb/s, rail1 0.",
            "\nLikely cause: only one of the port's two PCIe halves",
            # dead even in loopback: hardware, so a hardware fix, not NCCL_IB_HCA (which is set)
            "faulty hardware, not a setting",
            "\nFix: check the PCIe training of roceP2p1s0f1 (`lspci -vv` on its PCI function: "
            "LnkSta 32GT/s, Width x4), then power-drain the box (shut down, unplug power for "
            "60 s); if the half stays dead, reseat or have the unit serviced.",
        ),
    },
    "faults/switch_cpu_forwarding": {
        "test_switch_traffic.py::test_switch_cpu_under_traffic": (
            # the busiest sample names its round (the TCP rounds run too: they tell the cause of
            # the slow RDMA items) and when in it it was taken
            r"~ during (RDMA|TCP) round \d+ \(\d+ s in\) while fabric traffic crossed",
            "hw-offload off on: qsfp56-dd-1-1",
            "qsfp56-dd-1-2",
        ),
    },
    "faults/switch_fcs_errors": {
        "test_switch_traffic.py::test_switch_leg_counters[spark-2]": (
            "^spark-2: switch 192.168.88.1 port qsfp56-dd-1-5: rx-fcs-error +",
            "RDMA round", "rs-fec-uncorrected +",
            "Blamed on: the host->switch direction of the cable spark-2 port 1 <-> switch",
            "direction=host->switch", "counter=rx-fcs-error", "switch_leg=qsfp56-dd-1-5",
            "cable=spark-2 port 1 <-> switch 192.168.88.1 qsfp56-dd-1-5",
        ),
    },
    "faults/lane_degradation": {
        SOAK_LINK.format(r): (
            f"spark-2 {netdev} receiving on cable spark-2:rail{r}<->spark-1:rail{r}",
            "lane 3 at ", "stands alone and grew",
            "lanes_in_use=module EEPROM 0x11 (QSFP28): SFF-8636",
        )
        for r, netdev in ((0, "enp1s0f1np1"), (1, "enP2p1s0f1np1"))
    },
    "faults/phy_counters_missing": {
        SOAK_LINK.format(r): (f"^not measured: {netdev} exposes no rx_err_lane_*_phy counters",)
        for r, netdev in ((0, "enp1s0f1np1"), (1, "enP2p1s0f1np1"))
    },
    "faults/hot_nic": {
        "test_soak.py::test_soak_load[spark-1]": (
            "spark-1: NIC enp1s0f1np1 sensor /sys/class/net/enp1s0f1np1/device/hwmon/",
            "its own limit 105 C",
        ),
    },
    "faults/host_pfc": {
        "test_switch.py::test_switch_qos[spark-2]": (
            "pfc disabled while spark-2 runs PFC on priority 3", "--pfc 0,0,0,0,0,0,0,0",
            "a PFC profile for priority 3",
        ),
    },
    "direct-2": {
        "test_kernel_log.py::test_kernel_log[spark-1]": (
            "measured=0 link down, 0 AER (0 uncorrected), 0 thermal in the last ",
        ),
    },
    "faults/link_flap": {
        "test_kernel_log.py::test_kernel_log[spark-2]": (
            "^spark-2: the link dropped during the run (kernel log): +",
            "`mlx5_core 0000:01:00.1 enp1s0f1np1: Link down`",
            "`mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link down`",
        ),
    },
    "faults/nccl_socket_ifname": {
        "test_nccl.py::test_nccl_completes": (
            "the run ended without '# Avg bus bandwidth' (a failure, not a zero)",
        ),
        "test_nccl_env.py::test_nccl_socket_ifname[spark-2]": (
            "^spark-2: NCCL_SOCKET_IFNAME=eth0 (from /etc/nccl.conf line 1) selects no running "
            "interface with an address (no interface eth0): NCCL stops with 'Bootstrap : no "
            "socket interface found'\n",
        ),
    },
    "faults/firmware_mismatch": {  # the odd one only: the kernels and drivers agree
        "test_versions.py::test_versions_match": (
            "^versions differ between nodes: ConnectX firmware spark-3 runs 28.45.4028 "
            "(NVD0000000033) while the others run 28.45.1020 (NVD0000000033)\n",
        ),
    },
    "faults/command_hangs": {  # the hanging tool ends at its deadline; the others still answer
        "test_links.py::test_link[spark-1:rail0]": (
            "^not measured: spark-1: `ethtool enp1s0f1np1` did not finish within its deadline "
            "(20 s) and was ended$",
        ),
    },
    "faults/node_unreachable": {
        "test_soak.py::test_soak_load[spark-1]": (
            "^not measured: the heat soak needs traffic between two nodes that answer; "
            "spark-2: ssh: connection timed out after 10 s$",
        ),
        "test_soak.py::test_soak_link[spark-2:rail0]": (
            "^not measured: spark-2: ssh: connection timed out after 10 s$",
        ),
    },
    "mixed/switch-three": {
        "test_bandwidth.py::test_pair_rdma[spark-2<->spark-3]": (
            "transport retry counter exceeded (12)",
            "qsfp56-dd-2-1 mtu 1500 l2mtu 1500, below the 4156-byte RoCE packet",
        ),
    },
    "stock": {
        "test_kernel_log.py::test_kernel_log[spark-1]": (
            "^spark-1: the kernel log is not readable (dmesg: read kernel buffer failed: "
            "Operation not permitted; Hint: You are currently not seeing messages from other "
            "users and the system.)",
            "`sudo usermod -aG adm $USER`", "kernel.dmesg_restrict=0",
        ),
    },
    "faults/rx_discards": {
        "test_qos.py::test_rail_counters[spark-2:rail1]": (
            "rx_discards_phy +", "expected <= 0.1%",
            "during RDMA round 1/2",  # directions apart: a->b, then b->a
        ),
    },
}  # fmt: skip
"""What a failure's message (`^`: starts with, `^...$`: is exactly, `~`: the regex matches in
it) or a property (`name=value` starts so) says."""
OVER_SSH = [
    "faults/autoneg_failed",
    "faults/pfc_stall",
    "faults/switch_cpu_forwarding",
    "faults/switch_fcs_errors",
    "mixed/switch-three",  # a switch port at MTU 1500
]
"""The switch faults, run again with `switch.api: ssh`."""


def observed(doc: Results) -> dict[str, Any]:
    items = {
        i.id: f"{i.outcome} {i.rule or ''}".strip() for i in doc.items if i.outcome != "passed"
    }
    return {
        "verdict": doc.verdict,
        "checks": len(doc.items),
        "items": dict(sorted(items.items())),
        "causes": [[c.rule, list(c.objects), len(c.items)] for c in doc.causes],
    }


def _function(item_id: str) -> str:
    return item_id.rpartition("::")[2].partition("[")[0]


def _check_invariants(name: str, doc: Results) -> None:
    by_id = {i.id: i for i in doc.items}
    for i in doc.items:
        if i.outcome == "failed":
            message = i.message or ""
            assert any(w in message for w in ("spark-", "switch", "NCCL")), message
            if i.rule:
                assert "Fix: " in message and "cause: " in message, message
                assert i.expected is not None, (i.id, i.properties)
    for c in doc.causes:
        blamed = [o for o in map(objects.parse, c.objects) if o is not None]
        for item_id in c.items:
            param = item_id.partition("[")[2].removesuffix("]")  # where the item has no objects
            path = [*map(objects.parse, by_id[item_id].objects)] or [objects.parse(param)]
            known = [p for p in path if p is not None]
            if blamed and known:
                off = f"{c.rule} {c.objects} explains {item_id}, off its path {known}"
                assert objects.meet(blamed, known), off
    explained = [i for c in doc.causes for i in c.items]
    assert len(explained) == len(set(explained)), "a check is explained by two causes"
    loose = {
        _function(i.id)
        for i in doc.items
        if i.outcome in ("failed", "not_measured") and i.id not in explained
    }
    assert loose <= UNEXPLAINED_OK, loose
    data = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    named = [o for c in doc.causes for o in c.objects]
    named += [o for _, w in doc.warnings() for o in w.objects]
    for spec in (data.get("simulate") or {}).get("faults", []):
        if spec.get("node"):
            assert any(spec["node"] in o for o in named), (doc.causes, doc.warnings())


@pytest.mark.parametrize(("base", "seed"), [("demo.yaml", 3), ("ring-4.yaml", 11)])
def test_healthy_clusters_stay_accepted_on_other_seeds(
    pytester: pytest.Pytester, base: str, seed: int
) -> None:
    cluster = write_cluster(pytester.path, base, changes={"simulate": {"seed": seed}})
    run = run_suite(pytester, cluster, "-p", "no:html", "-q")
    assert (run.doc["verdict"], run.doc["causes"]) == ("accepted", [])


@pytest.mark.parametrize("name", NAMES)
def test_example(pytester: pytest.Pytester, name: str) -> None:
    run = run_suite(pytester, EXAMPLES / f"{name}.yaml", "-p", "no:html", "-q")
    doc = Results.model_validate(run.doc)
    _judge(name, doc, pin(name, observed(doc)))


@pytest.mark.parametrize("name", OVER_SSH)
def test_switch_example_over_ssh(pytester: pytest.Pytester, name: str) -> None:
    """switch.api ssh reads the RouterOS console instead of REST: the same pins, SAYS and
    invariants."""
    cluster = write_cluster(pytester.path, f"{name}.yaml", changes={"switch": {"api": "ssh"}})
    doc = Results.model_validate(run_suite(pytester, cluster, "-p", "no:html", "-q").doc)
    _judge(name, doc, pin(name, seen=None))
    for i in doc.items:
        if i.outcome == "failed" and _function(i.id).startswith("test_switch") and "[" in i.id:
            assert (i.message or "").startswith(i.id.partition("[")[2][:-1]), i.message


def _judge(name: str, doc: Results, pin: dict[str, Any]) -> None:
    assert observed(doc) == pin
    _check_invariants(name, doc)
    if name in ONE_CAUSE:
        assert len(doc.causes) == 1, doc.causes
        assert doc.causes[0].fix.startswith(ONE_CAUSE[name]), doc.causes[0].fix
    if doc.verdict == "accepted":
        assert doc.causes == ()
    items = {i.id: i for i in doc.items}
    for item_id, expected in SAYS.get(name, {}).items():
        item = items[item_id]
        message = item.message or "\n".join(w.message for w in item.warnings)
        for words in expected:
            assert says(message, item.properties, words), (item_id, words, message)
    if name == "faults/switch_cpu_forwarding":
        # The one read before any traffic saw an idle CPU: only the samples during it tell.
        assert int(items["test_switch.py::test_switch_resource"].properties["cpu_load_pct"]) < 50
    if name == "faults/link_flap":
        # The one cause explains both ends' kernel-log items and quotes their lines.
        cause = doc.causes[0]
        assert "test_kernel_log.py::test_kernel_log[spark-1]" in cause.items, cause
        assert any("Link down" in e for e in cause.evidence), cause
    if name == "direct-2":
        measured = items["test_kernel_log.py::test_kernel_log[spark-1]"].properties["measured"]
        assert measured.endswith(" s (dmesg)"), measured  # where the lines were read
