"""Key facts of real samples (link, host and new-tool outputs), checked apart from their
expected JSON; see test_sample_facts.py for why these restate what the golden files pin.
"""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes.ethtool import (
    parse_ethtool,
    parse_ethtool_fec,
    parse_ethtool_module,
    parse_ethtool_stats,
)
from pytest_sparkfabric.probes.ibdev2netdev import parse_ibdev2netdev
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nvidia_smi import parse_gpu_query
from pytest_sparkfabric.probes.ping import parse_ping

from ._samples import sample

# ---------------------------------------------------------------- ethtool


def test_ethtool_no_link_unsupported_cable() -> None:
    r = parse_ethtool(sample("ethtool/cx4-ens16f1np1-40g-forced-no-link-unsupported-cable.txt"))
    assert r.interface == "ens16f1np1"
    assert (r.speed_mbps, r.duplex, r.autoneg) == (None, None, False)
    assert r.link_detected is False
    assert r.link_detected_reason == "Cable issue, Unsupported cable"
    assert r.supported_fec_modes == ("None", "RS", "BASER")
    assert r.port == "FIBRE"


def test_ethtool_link_yes_40g() -> None:
    r = parse_ethtool(sample("ethtool/cx4-ens16f1np1-40g-link-yes.txt"))
    assert (r.speed_mbps, r.duplex, r.autoneg, r.link_detected) == (40000, "Full", False, True)
    assert r.link_detected_reason is None
    assert r.advertised_link_modes[0] == "40000baseKR4/Full"


def test_ethtool_grep_single_tab_line_100g() -> None:
    r = parse_ethtool(
        sample("ethtool/gb10-switch-enp1s0f1np1-grep-speed-100000-autoneg-degraded.txt")
    )
    assert r.speed_mbps == 100000
    assert (r.duplex, r.autoneg, r.link_detected) == (None, None, None)


def test_ethtool_module_laser_off() -> None:
    m = parse_ethtool_module(sample("ethtool-m/sff8636-qsfp28-cwdm4-finisar-laser-off-cx4.txt"))
    assert m.identifier == "0x11 (QSFP28)"
    assert (m.vendor_name, m.vendor_oui, m.vendor_pn, m.vendor_sn) == (
        "FINISAR CORP.",
        "00:90:65",
        "FTLC1152RGPL6-FB",
        "UX503M0",
    )
    assert m.transceiver_type == "100G Ethernet: 100G CWDM4 MSA with FEC"
    assert m.temp_c == 34.5
    assert m.tx_bias_ma == (0.0, 0.0, 0.0, 0.0)
    assert m.tx_power_dbm == (-40.0,) * 4 and m.rx_power_dbm == (-40.0,) * 4
    assert m.length_m == 2000.0
    assert any("Channel 4" in a and "tx power high alarm" in a for a in m.alarms_on)
    assert not any("threshold" in a for a in m.alarms_on)


def test_ethtool_module_reprogrammed() -> None:
    m = parse_ethtool_module(sample("ethtool-m/sff8636-qsfp28-cwdm4-finisar-reprogrammed-cx4.txt"))
    assert m.vendor_oui == "00:02:c9"
    assert m.tx_bias_ma == (42.068, 37.926, 38.870, 37.968)
    assert m.tx_power_dbm == (0.33, 0.17, -0.36, 0.62)
    assert m.rx_power_dbm == (-0.01, -0.41, -0.41, -0.13)
    assert m.alarms_on == ()
    assert (m.temp_c, m.voltage_v) == (33.76, 3.2505)
    assert ("Encoding", "0x07 ((256B/257B (transcoded FEC-enabled data))") in m.fields


def test_ethtool_stats_cx6dx_grep_err() -> None:
    s = parse_ethtool_stats(sample("ethtool-stats/cx6dx-vyos-eth5-grep-err-lossy-power-budget.txt"))
    assert s.lane_errors() == {0: 13115284, 1: 13115284, 2: 13115284, 3: 13115284}
    assert s.crc_errors == 13147323
    assert s["rx_symbol_err_phy"] == 13115284
    assert (s.symbol_errors, s.bits, s.corrected_bits) == (None, None, None)


def test_ethtool_stats_gx10_lanes() -> None:
    s = parse_ethtool_stats(sample("ethtool-stats/gx10-cx7-lane-counters-snippet.txt"))
    assert s.lane_errors() == {0: 6, 1: 2, 2: 190, 3: 0}
    assert s.corrected_bits == 198
    assert len(s) == 5


def test_ethtool_stats_synthetic_mlx5_layout() -> None:
    s = parse_ethtool_stats(sample("ethtool-stats/synthetic-mlx5-format-no-rx_bits_phy.txt"))
    assert s.bits is None
    assert s.lane_errors() == {0: 2913, 1: 3011, 2: 11694107, 3: 2900}
    assert (s.link_down_events, s.symbol_errors, s.crc_errors) == (1, 0, 0)
    assert s["rx0_packets"] == 1051474105 and s["rx_64_bytes_phy"] == 990544
    assert s.pause_frames()["rx_prio3_pause"] == 14


def test_ethtool_fec_ice_rs() -> None:
    f = parse_ethtool_fec(sample("ethtool-fec/ice-ens21f0np0-show-fec-stats.txt"))
    assert f.interface == "ens21f0np0"
    assert f.configured == ("Auto", "RS", "BaseR")
    assert f.active == "RS" and f.fec_active
    assert (f.corrected_blocks, f.uncorrectable_blocks) == (0, 0)


def test_ethtool_fec_none_with_lane_stats() -> None:
    f = parse_ethtool_fec(sample("ethtool-fec/netdev-rfc-eth0-show-fec-lanes.txt"))
    assert f.configured == ("None",) and f.active == "None" and not f.fec_active
    assert (f.corrected_blocks, f.uncorrectable_blocks) == (256, 145)


# ---------------------------------------------------------------- ping, nvidia-smi, ibdev2netdev


def test_ping_success() -> None:
    r = parse_ping(sample("ping/success-3-of-3.txt"), "", 0)
    assert (r.transmitted, r.received, r.loss_pct, r.verdict) == (3, 3, 0.0, "ok")
    assert r.rtt_avg_ms == 0.946 and r.local_mtu_error is None


def test_ping_path_mtu_loss() -> None:
    r = parse_ping(sample("ping/mtu-path-100pct-loss.txt"), "", 1)
    assert (r.transmitted, r.received, r.loss_pct, r.verdict) == (3, 0, 100.0, "lost")


def test_ping_local_mtu_error_on_stderr() -> None:
    stdout = "PING 10.200.3.5 (10.200.3.5) 1373(1401) bytes of data.\n"
    r = parse_ping(stdout, sample("ping/local-mtu-error-stderr.txt"), 1)
    assert r.verdict == "local_mtu" and r.local_mtu_error == 1400


def test_nvidia_smi_na_is_none() -> None:
    gpus = parse_gpu_query(sample("nvidia-smi/synthetic-two-gpus-na.txt"))
    assert [(g.temp_c, g.power_w, g.sm_clock_mhz, g.utilization_pct) for g in gpus] == [
        (41.0, 11.43, 2405.0, 0.0),
        (72.0, None, 2509.0, 96.0),
    ]


@pytest.mark.parametrize(
    "name", ["gb10-nvidia-playbook-spark-5c2d.txt", "gb10-spark-fb97-p0-up.txt"]
)
def test_ibdev2netdev_port0_both_halves_up(name: str) -> None:
    rows = parse_ibdev2netdev(sample(f"ibdev2netdev/{name}"))
    assert {(r.rdma, r.port, r.netdev, r.up) for r in rows} == {
        ("rocep1s0f0", 1, "enp1s0f0np0", True),
        ("rocep1s0f1", 1, "enp1s0f1np1", False),
        ("roceP2p1s0f0", 1, "enP2p1s0f0np0", True),
        ("roceP2p1s0f1", 1, "enP2p1s0f1np1", False),
    }


# ---------------------------------------------------------------- new parsers, key facts


def test_mlnx_qos_buffers_and_split_dscp_line() -> None:
    from pytest_sparkfabric.probes.mlnx_qos import parse_mlnx_qos

    q = parse_mlnx_qos(
        sample("mlnx_qos/cx-ens14f0-pfc-prio3-custom-dscp2prio-split-prio6-buffers.txt")
    )
    assert q.pfc_priorities == (3,) and q.pfc_buffer == (0, 2, 5, 7, 1, 2, 3, 6)
    assert q.dscp2prio[6] == (30, 55, 54, 53, 52, 51, 50, 49, 48)
    assert q.receive_buffer_bytes == (80256, 80256, 896, 80256, 896, 896, 896, 896)
    assert q.max_buffer_bytes is None
    off = parse_mlnx_qos(
        sample("mlnx_qos/cx-ens6-trust-pcp-pfc-all-off-receive-buffer-trailing-comma.txt")
    )
    assert (off.trust, off.pfc_priorities, off.dscp2prio) == ("pcp", (), {})
    old = parse_mlnx_qos(
        sample("mlnx_qos/mlnx-ofed-old-eth35-no-dcbx-no-trust-skprio-lines-md-indent.txt")
    )
    assert (old.dcbx_mode, old.trust, old.pfc_priorities) == (None, None, ())
    assert [tc.priorities for tc in old.traffic_classes][:2] == [(1,), (0,)]


def test_hw_counters_show_counters_nonzero() -> None:
    from pytest_sparkfabric.probes.hw_counters import parse_hw_counters

    (port,) = parse_hw_counters(
        sample("hw-counters/mlnx-show_counters-mlx5_bond_0-port1-ecn-cnp-nonzero.txt")
    ).ports
    assert (port.device, port.port, len(port.counters)) == (None, 1, 30)
    assert (port.cnp_sent, port.ecn_marked, port.out_of_sequence) == (
        1052612505,
        21278189006,
        1811101,
    )
    assert port.cnp_handled == 0


def test_lldpctl_five_neighbours_on_two_ports() -> None:
    from pytest_sparkfabric.probes.lldp import parse_lldpctl

    n = parse_lldpctl(
        sample("lldpctl/vagrant-lldpctl-5-neighbors-3-vms-host-adapter-lldp-med-pmd.txt")
    )
    assert [x.local_port for x in n.neighbors] == ["eth1", "eth1", "eth2", "eth2", "eth2"]
    adapter = n.neighbors[3]
    assert (adapter.system_name, adapter.neighbor_mac, adapter.ttl_s) == (
        None,
        "0a:00:27:00:00:04",
        3601,
    )
    cisco = parse_lldpctl(
        sample("lldpctl/cml-lldpctl-cdpv2-cisco-vios-multiline-sysdescr-vlan.txt")
    )
    (switch,) = cisco.neighbors
    assert (switch.via, switch.port_name, switch.neighbor_mac) == (
        "CDPv2",
        "GigabitEthernet1/1",
        None,
    )
    assert switch.system_description is not None
    assert switch.system_description.endswith("Compiled Tue 23-Apr-19 04:48 by mmen")


def test_gpu_burn_faulty_verdicts_with_exit_zero() -> None:
    from pytest_sparkfabric.probes.gpu_burn import parse_gpu_burn

    r = parse_gpu_burn(sample("gpu-burn/16gpu-sys9029gp-faulty-negative-error-counts-warning.txt"))
    assert r.verdicts is not None and len(r.verdicts) == 16 and not any(ok for _, ok in r.verdicts)
    assert r.last_progress is not None and r.last_progress.errors[1] == -524288000
    assert r.last_progress.warning[1] and not r.all_ok
    ok_yet_idle = parse_gpu_burn(
        sample("gpu-burn/6gpu-titan-2080ti-init-error-load-module-yet-all-ok.txt")
    )
    assert ok_yet_idle.verdicts is not None and all(ok for _, ok in ok_yet_idle.verdicts)
    assert not ok_yet_idle.did_work and not ok_yet_idle.all_ok
    assert ok_yet_idle.failures == ('Couldn\'t init a GPU test: Error in "load module":',)


def test_ibdev2netdev_verbose_port_state_apart_from_netdev() -> None:
    rows = parse_ibdev2netdev(
        sample("ibdev2netdev/cx4-ib-mode-sriov-v-port-active-netdev-down.txt")
    )
    assert (rows[1].rdma, rows[1].port_state, rows[1].up) == ("mlx5_1", "ACTIVE", False)
    assert (rows[2].part, rows[2].board, rows[2].port_state) == ("MT4116 - NA", None, "DOWN")


def test_iperf3_refused_with_rc_zero_is_an_error_result() -> None:
    r = parse_iperf3_json(
        sample("iperf3/host-iperf3.12-netns-connection-refused-error-key-rc0.json")
    )
    assert (r.error, r.ok, r.version) == (
        "unable to connect to server: Connection refused",
        False,
        "iperf 3.12",
    )
    bidir = parse_iperf3_json(sample("iperf3/host-iperf3.12-netns-bidir-sum-bidir-reverse.json"))
    assert bidir.bidir_reverse_sent_gbps is not None and bidir.bidir_reverse_sent_gbps > 1


def test_ip_json_two_arrays_from_the_per_device_form() -> None:
    from pytest_sparkfabric.probes.ip import parse_ip_addr_json

    ifaces = parse_ip_addr_json(
        sample("ip-addr/host-iproute2-6.1-netns-per-device-two-arrays-suite-form.json")
    )
    assert [i.name for i in ifaces] == ["w3pa0", "lo"]
