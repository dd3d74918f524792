"""The operator faults of issue 13 as the tools show them: a firewall that rejects the test
ports, firmware drift, a 100G link, stale NCCL lines in /etc/nccl.conf."""

from __future__ import annotations

from pytest_sparkfabric.probes import ethtool, ping
from pytest_sparkfabric.probes.ethtool_driver import parse_ethtool_driver
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import with_faults
from tests.sim.helpers import rdma

R0 = ("spark-1", "rocep1s0f1", "spark-2", "rocep1s0f1", "192.168.100.12")


def _t(*faults: str, base: str = "direct-2") -> SimTransport:
    return SimTransport(with_faults(base, *faults))


def test_a_firewall_rejects_the_test_ports_but_not_ping_or_loopback() -> None:
    t = _t("{fault: firewall, node: spark-2}")
    server = t.start(Job("spark-2", "ib_write_bw -d rocep1s0f1 -F --report_gbits -p 18515", 60))
    r = t.run(Job("spark-1", "ib_write_bw -d rocep1s0f1 -F --report_gbits -p 18515 " + R0[4], 60))
    server.stop()
    assert r.rc == 1 and "Couldn't connect to 192.168.100.12:18515" in r.stderr
    p = t.run(Job("spark-1", "ping -c 3 -W 1 -q -I enp1s0f1np1 192.168.100.12", 30))
    assert ping.parse_ping(p.stdout, p.stderr, p.rc).ok
    t.start(Job("spark-2", "iperf3 -s -1 -p 5201", 60))
    j = t.run(Job("spark-1", "iperf3 -c 192.168.100.12 -P 4 -t 10 -p 5201 -J", 60))
    assert "No route to host" in j.stdout
    assert rdma(t, [("spark-2", "rocep1s0f1", "spark-2", "rocep1s0f1", R0[4])])[0] > 90
    assert rdma(t, [("spark-2", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11")])[0] > 80


def test_firmware_mismatch_shows_in_ethtool_i_of_that_node_only() -> None:
    t = _t("{fault: firmware_mismatch, node: spark-2}")
    fw = {
        n: parse_ethtool_driver(t.run(Job(n, "ethtool -i enp1s0f1np1", 10)).stdout)
        for n in ("spark-1", "spark-2")
    }
    assert fw["spark-2"].firmware_version == "28.45.4028 (NVD0000000033)"
    assert fw["spark-1"].firmware_version != fw["spark-2"].firmware_version


def test_link_speed_is_100g_at_both_ends_and_halves_the_port() -> None:
    t = _t("{fault: link_speed, node: spark-2, port: 1}")
    for node in ("spark-1", "spark-2"):
        link = ethtool.parse_ethtool(t.run(Job(node, "ethtool enp1s0f1np1", 10)).stdout)
        assert link.speed_mbps == 100_000 and link.link_detected
        speed = t.run(Job(node, "cat /sys/class/net/enp1s0f1np1/speed", 10)).stdout
        assert speed == "100000\n"
    r1 = ("spark-1", "roceP2p1s0f1", "spark-2", "roceP2p1s0f1", "192.168.101.12")
    both = rdma(t, [R0, r1])
    assert 85 < sum(both) < 100


def test_stale_nccl_lines_land_in_etc_nccl_conf() -> None:
    t = _t("{fault: nccl_gid_index, node: spark-2}", "{fault: nccl_socket_ifname, node: spark-2}")
    conf = t.run(Job("spark-2", "cat /etc/nccl.conf", 10)).stdout
    assert conf == "NCCL_IB_GID_INDEX=5\nNCCL_SOCKET_IFNAME=eth0\n"
    assert t.run(Job("spark-1", "cat /etc/nccl.conf", 10)).rc != 0
