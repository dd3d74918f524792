"""Each injected fault shows the signature the field reported, through the real tools (the
operator faults of issue 13 too: a firewall on the test ports, firmware drift, a 100G link,
stale NCCL lines in /etc/nccl.conf)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import ParseError, ethtool, ip, ping, sysfs
from pytest_sparkfabric.probes.ethtool import parse_ethtool_driver
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, table
from tests.sim.helpers import R0, R1, fault, nccl, out, rdma, tcp

IPS4 = [f"192.168.100.{11 + i}" for i in range(4)]


def _ping(t: SimTransport, node: str, dev: str, peer: str, size: int = 8972) -> ping.PingResult:
    cmd = f"ping -M do -s {size} -I {dev} -c 3 -W 1 -w 5 -q {peer}"
    r = t.run(Job(node, cmd, 30))
    return ping.parse_ping(r.stdout, r.stderr, r.rc)


def test_link_down_takes_both_ends_down() -> None:
    t = fault("{fault: link_down, node: spark-2, port: 1}")
    for node in ("spark-1", "spark-2"):
        ifaces = {i.name: i for i in ip.parse_ip_addr_json(out(t, node, "ip -j addr show"))}
        assert not ifaces["enp1s0f1np1"].carrier and ifaces["enp1s0f1np1"].operstate == "DOWN"
        assert ethtool.parse_ethtool(out(t, node, "ethtool enp1s0f1np1")).link_detected is False
    result = _ping(t, "spark-1", "enp1s0f1np1", "192.168.100.12", 56)
    assert not result.ok and result.received == 0
    assert rdma(t, [R0]) == [0.0]


def test_autoneg_failed_leg_is_down_with_its_node_port() -> None:
    t = fault("{fault: autoneg_failed, switch_port: qsfp56-dd-1-5}", base="demo")
    assert t.switch is not None
    legs = {row["name"]: row for row in table(t.switch.rest_get("/rest/interface/ethernet"))}
    bad, good = legs["qsfp56-dd-1-5"], legs["qsfp56-dd-1-1"]
    assert (bad["auto-negotiation"], bad["running"]) == ("true", "false")
    assert (good["auto-negotiation"], good["running"]) == ("false", "true")
    mon = t.switch.rest_post(
        "/rest/interface/ethernet/monitor", {"numbers": "qsfp56-dd-1-5", "once": ""}
    )
    assert isinstance(mon, list) and mon[0]["status"] == "no-link"
    assert "(Down)" in out(t, "spark-2", "ibdev2netdev").splitlines()[1]
    assert _ping(t, "spark-1", "enp1s0f1np1", "192.168.100.13", 56).ok


def test_switch_cpu_forwarding_caps_everything_and_loads_the_cpu() -> None:
    t = fault("{fault: switch_cpu_forwarding}", base="demo")
    assert t.switch is not None
    ports = t.switch.rest_get("/rest/interface/bridge/port")
    assert isinstance(ports, list) and len(ports) == 5
    assert {p["hw-offload"] for p in ports} == {"false"} and {p["hw"] for p in ports} == {"true"}
    resource = t.switch.rest_get("/rest/system/resource")
    assert isinstance(resource, dict) and int(resource["cpu-load"]) < 20
    assert 5 <= rdma(t, [R0])[0] <= 10
    assert 5 <= tcp(t, [("spark-1", "192.168.100.11", "spark-2", "192.168.100.12")])[0] <= 10
    busbw = nccl(t, IPS4).avg_busbw_gbytes_s
    assert busbw is not None and 0.4 <= busbw <= 0.5
    # The CPU is busy while traffic crosses the switch and idle once it ended: a read after
    # the traffic cannot tell (tests/sim/test_switch_console.py samples during it).
    resource = t.switch.rest_get("/rest/system/resource")
    assert isinstance(resource, dict) and int(resource["cpu-load"]) < 20


def test_pfc_stall_stalls_rdma_not_tcp() -> None:
    t = fault("{fault: pfc_stall}", base="demo")
    assert t.switch is not None
    qos = t.switch.rest_get("/rest/interface/ethernet/switch/qos/port")
    assert isinstance(qos, list) and {q["pfc"] for q in qos} == {"enabled"}
    assert rdma(t, [R0])[0] <= 6
    assert tcp(t, [("spark-1", "192.168.100.11", "spark-2", "192.168.100.12")])[0] >= 90
    stats = ethtool.parse_ethtool_stats(out(t, "spark-1", "ethtool -S enp1s0f1np1"))
    assert stats["rx_pause_ctrl_phy"] > 0


def test_duplicate_ip_moves_an_address() -> None:
    t = fault("{fault: duplicate_ip, node: spark-2, rail: 1}")
    ifaces = {i.name: i for i in ip.parse_ip_addr_json(out(t, "spark-2", "ip -j addr show"))}
    assert [str(a.ip) for a in ifaces["enP2p1s0f1np1"].ipv4] == ["192.168.101.11"]
    assert not _ping(t, "spark-1", "enP2p1s0f1np1", "192.168.101.12", 56).ok


def test_half_port_carries_nothing_on_one_half() -> None:
    t = fault("{fault: half_port, node: spark-1, rail: 1}")
    rail0, rail1 = rdma(t, [R0, R1])
    assert 90 <= rail0 <= 98 and rail1 < 0.5
    assert tcp(t, [("spark-1", "192.168.101.11", "spark-2", "192.168.101.12")])[0] < 0.05
    assert _ping(t, "spark-1", "enP2p1s0f1np1", "192.168.101.12").ok


def test_nccl_single_hca_and_socket_fallback() -> None:
    single = fault("{fault: nccl_single_hca}", base="faults/nccl_single_hca")
    assert "NCCL_IB_HCA=rocep1s0f1" in out(single, "spark-1", "cat /etc/nccl.conf")
    run = nccl(single, ["192.168.100.11", "192.168.100.12"])
    assert run.ib_devices() == {"rocep1s0f1"}
    assert run.avg_busbw_gbytes_s is not None and 13.5 <= run.avg_busbw_gbytes_s <= 14.3
    sock = fault("{fault: nccl_socket, node: spark-2}")
    run = nccl(sock, ["192.168.100.11", "192.168.100.12"])
    assert run.networks_by_host()["spark-2"] == {"Socket"}
    assert run.networks_by_host()["spark-1"] == {"IB"}
    assert run.avg_busbw_gbytes_s is not None and 2 <= run.avg_busbw_gbytes_s <= 4


def test_ipv6_enabled_shifts_the_gid_index() -> None:
    t = fault("{fault: ipv6_enabled, node: spark-2, rail: 1}")
    values = sysfs.parse_read_files(
        out(
            t,
            "spark-2",
            sysfs.build_read_files(
                sysfs.gid_paths("roceP2p1s0f1") + list(sysfs.sysctl_paths("enP2p1s0f1np1").values())
            ),
        )
    )
    from ipaddress import IPv4Address

    entry = sysfs.find_rocev2_gid(
        sysfs.gid_table(values, "roceP2p1s0f1"), "enP2p1s0f1np1", IPv4Address("192.168.101.12")
    )
    assert entry is not None and entry.index == 5
    assert sysfs.net_sysctls(values, "enP2p1s0f1np1").disable_ipv6 == 0
    ifaces = {i.name: i for i in ip.parse_ip_addr_json(out(t, "spark-2", "ip -j addr show"))}
    assert [a.ip.is_link_local for a in ifaces["enP2p1s0f1np1"].ipv6] == [True]
    t.start(Job("spark-2", "ib_write_bw -d roceP2p1s0f1 -F --report_gbits -x 3 -D 5", 60))
    r = t.run(
        Job("spark-1", "ib_write_bw -d roceP2p1s0f1 -F --report_gbits -D 5 192.168.101.12", 60)
    )
    # perftest: a GID the peer cannot route -> RC retries run out, rc 1 (FACTS 3; no source path
    # prints the table head with no row and rc 0).
    assert r.rc == 1 and "#bytes" in r.stdout
    assert "Failed status-transport retry counter exceeded (12)" in r.stderr
    with pytest.raises(ParseError):
        parse_ib_write_bw(r.stdout)


def test_mtu_fault_local_error_one_way_black_hole_the_other() -> None:
    t = fault("{fault: mtu, node: spark-2, rail: 0, value: 1500}")
    r = t.run(Job("spark-2", "ping -M do -s 8972 -I enp1s0f1np1 -c 2 192.168.100.11", 30))
    assert r.rc == 1 and r.stderr == "ping: local error: message too long, mtu=1500\n" * 2
    local = ping.parse_ping(r.stdout, r.stderr, r.rc)
    assert local.local_mtu_error == 1500 and not local.ok
    far = _ping(t, "spark-1", "enp1s0f1np1", "192.168.100.12")
    assert far.received == 0 and far.local_mtu_error is None
    assert _ping(t, "spark-1", "enp1s0f1np1", "192.168.100.12", 1472).ok


def test_switch_mtu_fault_drops_jumbo_frames_on_the_path() -> None:
    t = fault("{fault: mtu, switch_port: qsfp56-dd-1-5, value: 1500}", base="demo")
    assert not _ping(t, "spark-1", "enp1s0f1np1", "192.168.100.12").ok
    assert _ping(t, "spark-1", "enp1s0f1np1", "192.168.100.13").ok


def test_throttled_nic_is_slow_even_in_loopback_but_looks_clean() -> None:
    t = fault("{fault: nic_throttled, node: spark-1}")
    loop = rdma(t, [("spark-1", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11")])[0]
    assert 8 <= loop <= 25
    assert ethtool.parse_ethtool(out(t, "spark-1", "ethtool enp1s0f1np1")).speed_mbps == 200000
    stats = ethtool.parse_ethtool_stats(out(t, "spark-1", "ethtool -S enp1s0f1np1"))
    assert stats["rx_pcs_symbol_err_phy"] == 0 and stats["link_down_events_phy"] == 0
    assert 8 <= rdma(t, [R0])[0] <= 25


def test_sysctl_faults() -> None:
    t = fault("{fault: arp_flux, node: spark-1}", "{fault: rp_filter_strict, node: spark-2}")
    paths = list(sysfs.sysctl_paths("enp1s0f1np1").values())
    flux = sysfs.net_sysctls(
        sysfs.parse_read_files(out(t, "spark-1", sysfs.build_read_files(paths))), "enp1s0f1np1"
    )
    strict = sysfs.net_sysctls(
        sysfs.parse_read_files(out(t, "spark-2", sysfs.build_read_files(paths))), "enp1s0f1np1"
    )
    assert (flux.arp_ignore, flux.arp_announce, flux.rp_filter) == (0, 0, 2)
    assert (strict.arp_ignore, strict.arp_announce, strict.rp_filter) == (1, 2, 1)
    assert out(t, "spark-2", "sysctl -n net.ipv4.conf.all.rp_filter") == "1\n"


def test_pcie_width_halves_one_domain() -> None:
    t = fault("{fault: pcie_width, node: spark-2, rail: 1}")
    assert out(t, "spark-2", "cat /sys/bus/pci/devices/0002:01:00.1/current_link_width") == "2\n"
    assert out(t, "spark-2", "cat /sys/bus/pci/devices/0000:01:00.1/current_link_width") == "4\n"
    rail0, rail1 = rdma(t, [R0, R1])
    assert rail0 >= 90 and 50 <= rail1 <= 58


def test_eeprom_placeholder_reads_zeroes() -> None:
    t = fault("{fault: eeprom_placeholder, node: spark-1}")
    module = ethtool.parse_ethtool_module(out(t, "spark-2", "ethtool -m enp1s0f1np1"))
    assert set(module.attenuation_db.values()) == {0.0}
    assert module.lengths_m["Cable assembly length"] == 0  # a QSFP112's CMIS EEPROM
    healthy = SimTransport(example("direct-2"))
    module = ethtool.parse_ethtool_module(out(healthy, "spark-2", "ethtool -m enp1s0f1np1"))
    assert module.length_m == 1 and module.attenuation_db["Attenuation at 7GHz"] == 4


def test_a_firewall_rejects_the_test_ports_but_not_ping_or_loopback() -> None:
    t = fault("{fault: firewall, node: spark-2}")
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
    t = fault("{fault: firmware_mismatch, node: spark-2}")
    fw = {
        n: parse_ethtool_driver(out(t, n, "ethtool -i enp1s0f1np1")) for n in ("spark-1", "spark-2")
    }
    assert fw["spark-2"].firmware_version == "28.45.4028 (NVD0000000033)"
    assert fw["spark-1"].firmware_version != fw["spark-2"].firmware_version


def test_link_speed_is_100g_at_both_ends_and_halves_the_port() -> None:
    t = fault("{fault: link_speed, node: spark-2, port: 1}")
    for node in ("spark-1", "spark-2"):
        link = ethtool.parse_ethtool(out(t, node, "ethtool enp1s0f1np1"))
        assert link.speed_mbps == 100_000 and link.link_detected
        assert out(t, node, "cat /sys/class/net/enp1s0f1np1/speed") == "100000\n"
    both = rdma(t, [R0, R1])
    assert 85 < sum(both) < 100


def test_stale_nccl_lines_land_in_etc_nccl_conf() -> None:
    t = fault(
        "{fault: nccl_gid_index, node: spark-2}", "{fault: nccl_socket_ifname, node: spark-2}"
    )
    assert (
        out(t, "spark-2", "cat /etc/nccl.conf") == "NCCL_IB_GID_INDEX=5\nNCCL_SOCKET_IFNAME=eth0\n"
    )
    assert t.run(Job("spark-1", "cat /etc/nccl.conf", 10)).rc != 0
