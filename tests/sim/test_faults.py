"""What only the simulator's own tools show of a fault: the rates it leaves (DOMAIN.md section 5)
and the field's texts. What the suite reads of each (and fails, with which rule) is the fault
matrix's pin (tests/data/matrix.json)."""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Any

import pytest

from pytest_sparkfabric.probes import ParseError, sysfs
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from tests.sim.conftest import IB, IPS4, LOOP1, R0, R1, nccl, out, rdma, served, sim, tcp

EEPROM = "ethtool -m enp1s0f1np1"
TCP0 = ("spark-1", "192.168.100.11", "spark-2", "192.168.100.12")
TCP1 = ("spark-1", "192.168.101.11", "spark-2", "192.168.101.12")
SPARK2_LOOP = ("spark-2", "rocep1s0f1", "spark-2", "rocep1s0f1", "192.168.100.12")
SPARK2_TO_1 = ("spark-2", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11")
# fault, base example, what runs at once (ib_write_bw or iperf3 pairs, NCCL ranks), where the
# sum of its Gb/s (NCCL: busbw GB/s) lands
RATES: list[tuple[str, str, str, list[Any], float, float]] = [
    ("{fault: link_down, node: spark-2, port: 1}", "direct-2", "rdma", [R0], 0, 0),
    ("{fault: switch_cpu_forwarding}", "demo", "rdma", [R0], 5, 10),
    ("{fault: switch_cpu_forwarding}", "demo", "tcp", [TCP0], 5, 10),
    ("{fault: switch_cpu_forwarding}", "demo", "nccl", IPS4, 0.4, 0.5),
    ("{fault: pfc_stall}", "demo", "rdma", [R0], 0, 6),  # RDMA stalls, TCP does not
    ("{fault: pfc_stall}", "demo", "tcp", [TCP0], 90, 200),
    ("{fault: half_port, node: spark-1, rail: 1}", "direct-2", "rdma", [R1], 0, 0.5),
    ("{fault: half_port, node: spark-1, rail: 1}", "direct-2", "rdma", [R0], 90, 98),
    ("{fault: half_port, node: spark-1, rail: 1}", "direct-2", "tcp", [TCP1], 0, 0.05),
    ("{fault: nic_throttled, node: spark-1}", "direct-2", "rdma", [LOOP1], 8, 25),  # loopback too
    ("{fault: nic_throttled, node: spark-1}", "direct-2", "rdma", [R0], 8, 25),
    ("{fault: pcie_width, node: spark-2, rail: 1}", "direct-2", "rdma", [R1], 50, 58),
    ("{fault: pcie_width, node: spark-2, rail: 1}", "direct-2", "rdma", [R0], 90, 200),
    ("{fault: link_speed, node: spark-2, port: 1}", "direct-2", "rdma", [R0, R1], 85, 100),
    ("{fault: nccl_single_hca}", "faults/nccl_single_hca", "nccl", IPS4[:2], 13.5, 14.3),
    ("{fault: nccl_socket, node: spark-2}", "direct-2", "nccl", IPS4[:2], 2, 4),
    ("{fault: firewall, node: spark-2}", "direct-2", "rdma", [SPARK2_LOOP], 90, 200),
    ("{fault: firewall, node: spark-2}", "direct-2", "rdma", [SPARK2_TO_1], 80, 200),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "base", "tool", "runs", "low", "high"), RATES)
def test_the_fault_moves_the_rates(
    spec: str, base: str, tool: str, runs: list[Any], low: float, high: float
) -> None:
    t = sim(base, spec)
    if tool == "nccl":
        busbw = nccl(t, runs).avg_busbw_gbytes_s
        assert busbw is not None and low <= busbw <= high
    else:
        assert low <= sum((rdma if tool == "rdma" else tcp)(t, runs)) <= high


def test_a_placeholder_eeprom_reads_zeroes() -> None:
    zeroes = out(sim("direct-2", "{fault: eeprom_placeholder, node: spark-1}"), "spark-2", EEPROM)
    healthy = out(sim(), "spark-2", EEPROM)
    for text, length, db in ((zeroes, "0.00m", "0db"), (healthy, "1.00m", "4db")):
        assert f"Cable assembly length                     : {length}" in text  # QSFP112: CMIS
        assert f"Attenuation at 7GHz                       : {db}" in text


def test_an_unroutable_gid_runs_the_rc_retries_out() -> None:
    t = sim("direct-2", "{fault: ipv6_enabled, node: spark-2, rail: 1}")
    read = out(t, "spark-2", sysfs.build_read_files(sysfs.gid_paths("roceP2p1s0f1")))
    gids = sysfs.gid_table(sysfs.parse_read_files(read), "roceP2p1s0f1")
    entry = sysfs.find_rocev2_gid(gids, "enP2p1s0f1np1", IPv4Address("192.168.101.12"))
    assert entry is not None and entry.index == 5  # shifted by the link-local address
    assert '"family":"inet6","local":"fe80:' in out(t, "spark-2", "ip -j addr show")
    r = served(
        t, "spark-2", IB.format("roceP2p1s0f1") + " -D 5", "spark-1", "192.168.101.12", "-x 3"
    )
    # perftest: a GID the peer cannot route -> RC retries run out, rc 1 (FACTS 3; no source path
    # prints the table head with no row and rc 0).
    assert r.rc == 1 and "#bytes" in r.stdout
    assert "Failed status-transport retry counter exceeded (12)" in r.stderr
    with pytest.raises(ParseError):
        parse_ib_write_bw(r.stdout)
