"""The model other stages read: rail names, declared link speeds, the approved cable list; the
shipped template (examples/cluster.example.yaml) uses ssh and every section."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.cluster import load_cluster, parse_cluster
from tests.cluster.samples import DIRECT, SIM, SWITCH
from tests.sim.conftest import EXAMPLES


def test_the_real_template_uses_ssh_and_every_section() -> None:
    cluster = load_cluster(EXAMPLES / "cluster.example.yaml")
    spec = cluster.spec
    assert spec.transport == "ssh" and all(n.ssh is not None for n in cluster.nodes)
    assert spec.switch is not None and spec.thresholds and spec.nccl.env
    assert spec.simulate is None


def test_rails_take_the_spark_names_unless_the_file_gives_its_own() -> None:
    cluster = parse_cluster(SWITCH.replace("netdev: enp1s0f1np1", "netdev: fab0"))
    given, default = cluster.node("spark-1").rail(1, 0), cluster.node("spark-2").rail(1, 1)
    assert (given.netdev, given.rdma, given.pci) == ("fab0", "rocep1s0f1", "0000:01:00.1")
    assert (default.netdev, default.rdma) == ("enP2p1s0f1np1", "roceP2p1s0f1")
    assert default.id == "spark-2:rail1"
    quoted = parse_cluster(DIRECT.replace("      1: [192.168.100.12", "      '1': [192.168.100.12"))
    assert quoted.node("spark-2").ports == (1,)
    faults = parse_cluster(SIM).spec.simulate.faults  # type: ignore[union-attr]
    assert [f.fault for f in faults] == ["link_down", "lane_degradation"]


@pytest.mark.parametrize(
    ("cluster_speed", "leg", "port", "gbps"),
    [
        ("", "", "", (200, 200, 200)),
        ("link_speed: 100G\n", "", "", (100, 100, 100)),
        ("", "qsfp56-dd-1-5: 100G", "", (200, 100, 200)),
        ("link_speed: 100G\n", "qsfp56-dd-1-5: 100G", "1: 200G", (100, 200, 100)),
    ],
    ids=["default", "cluster", "switch-leg", "node-port-wins"],
)
def test_the_declared_speed_of_a_rail_is_its_port_s_else_its_leg_s_else_the_cluster_s(
    cluster_speed: str, leg: str, port: str, gbps: tuple[int, ...]
) -> None:
    expected = {f"spark-{i}": speed * 1000 for i, speed in enumerate(gbps, 1)}
    text = cluster_speed + SWITCH
    text = text.replace("  ports: {spark-1", f"  link_speed: {{{leg}}}\n  ports: {{spark-1")
    text = text.replace("  - name: spark-2\n", f"  - name: spark-2\n    link_speed: {{{port}}}\n")
    cluster = parse_cluster(text)
    assert {n: cluster.link_speed_mbps(n, 1) for n in expected} == expected
    assert {r.node: r.link_speed_mbps for r in cluster.rails} == expected
    with pytest.raises(KeyError):
        cluster.link_speed_mbps("spark-9", 1)


@pytest.mark.parametrize(
    ("vendor", "part", "approved"),
    [
        ("Amphenol", "NJAAKK-N911", True),
        ("AMPHENOL CORP.  ", "njaakk0006-05 ", True),  # EEPROM padding, case, a suffix
        ("Luxshare", "LMTQF022-SD-R", True),
        ("Luxshare", "NJAAKK-N911", False),  # the part of another vendor
        ("PHILISUN", "QSFP-DD-2Q56", False),
        ("", "", False),
    ],
)
def test_the_default_approved_cables_are_nvidia_s_list(
    vendor: str, part: str, approved: bool
) -> None:
    assert parse_cluster(DIRECT).approved_cable(vendor, part) is approved


def test_the_approved_list_is_the_file_s_when_it_gives_one() -> None:
    text = DIRECT + "cables: {approved: [{vendor: PHILISUN, part: QSFP-DD}]}\n"
    cluster = parse_cluster(text)
    assert cluster.approved_cable("Philisun", "QSFP-DD-2Q56")
    assert not cluster.approved_cable("Amphenol", "NJAAKK-N911")
