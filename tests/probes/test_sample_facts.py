"""Key facts of real samples, checked apart from their expected JSON.

The golden test pins every parsed value; these tests restate the facts a reviewer checked
against each PROVENANCE.md (so a careless SPARKFABRIC_UPDATE_GOLDEN=1 cannot quietly accept a
wrong parse) and the relations between values that a JSON comparison cannot express (sums
across files, derived bandwidths, cut texts).
"""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import (
    parse_ethtool,
    parse_ethtool_fec,
    parse_ethtool_module,
    parse_ethtool_stats,
)
from pytest_sparkfabric.probes.ibdev2netdev import parse_ibdev2netdev
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nccl import busbw_from_algbw, parse_nccl_tests
from pytest_sparkfabric.probes.nvidia_smi import parse_gpu_query
from pytest_sparkfabric.probes.perftest import MB_PER_S_TO_GBPS, parse_ib_write_bw
from pytest_sparkfabric.probes.ping import parse_ping

from ._samples import sample

approx = pytest.approx

# ---------------------------------------------------------------- perftest


def test_ib_write_bw_gb10_q4_rdmacm() -> None:
    r = parse_ib_write_bw(sample("perftest/ib_write_bw-gb10-client-q4-rdmacm.txt"))
    assert (r.device, r.qps, r.link_type, r.mtu_bytes, r.rdma_cm) == (
        "rocep1s0f0",
        4,
        "IB",
        1024,
        True,
    )
    assert len(r.rows) == 1
    row = r.rows[0]
    assert (row.size_bytes, row.iterations) == (65536, 20000)
    assert (row.bw_peak_gbps, row.bw_avg_gbps, row.msg_rate_mpps) == (111.62, 111.61, 0.212877)
    assert r.bw_avg_gbps == 111.61
    assert not r.run_infinitely


def test_ib_write_bw_run_infinitely_rail0_mean_92_57() -> None:
    r = parse_ib_write_bw(
        sample("perftest/ib_write_bw-gb10-nvidia-playbook-client1-run-infinitely-92.57.txt")
    )
    assert (r.device, r.gid_index, r.link_type) == ("rocep1s0f0", 3, "Ethernet")
    assert r.no_peak_warning and r.run_infinitely
    assert len(r.rows) == 5
    assert all(row.bw_peak_gbps == 0.0 for row in r.rows)
    assert r.bw_avg_gbps == approx((92.57 * 4 + 92.56) / 5)
    assert r.bw_avg_gbps == approx(92.57, abs=0.01)


def test_ib_write_bw_run_infinitely_rail1_six_rows_97_28() -> None:
    rail1 = parse_ib_write_bw(
        sample("perftest/ib_write_bw-gb10-nvidia-playbook-client2-run-infinitely-97.28.txt")
    )
    rail0 = parse_ib_write_bw(
        sample("perftest/ib_write_bw-gb10-nvidia-playbook-client1-run-infinitely-92.57.txt")
    )
    assert rail1.device == "roceP2p1s0f0"
    assert len(rail1.rows) == 6
    assert rail1.bw_avg_gbps == approx((97.28 * 5 + 97.29) / 6)
    # The playbook's total across both rails of the port.
    assert rail0.bw_avg_gbps + rail1.bw_avg_gbps == approx(189.85, abs=0.02)


def test_ib_write_bw_loopback_8m_mb_per_sec_counted_once() -> None:
    r = parse_ib_write_bw(
        sample("perftest/ib_write_bw-loopback-ib0-8M-server-and-client-superbench.txt")
    )
    assert r.reported_unit == "MB/sec"
    assert r.device == "ib0"
    assert len(r.rows) == 2 and r.rows[0] == r.rows[1]
    # MB is 2^20 bytes in perftest: 24056.72 MB/sec is 201.8 Gb/s, not 2 x that.
    assert r.bw_avg_gbps == approx(24056.72 * 2**20 * 8 / 1e9)
    assert r.bw_avg_gbps == approx(201.80, abs=0.01)
    # The MsgRate column says the same: 0.003007 Mpps of 8 MiB messages.
    assert r.rows[0].msg_rate_mpps * 1e6 * 8388608 * 8 / 1e9 == approx(r.bw_avg_gbps, rel=1e-3)


def test_ib_write_bw_interleaved_all_sizes_duplicate_row_once() -> None:
    r = parse_ib_write_bw(
        sample(
            "perftest/ib_write_bw-loopback-ib0-all-sizes-interleaved-server-client-superbench.txt"
        )
    )
    sizes = [row.size_bytes for row in r.rows]
    assert len(set(sizes)) == 23 and min(sizes) == 2 and max(sizes) == 8388608
    assert sizes.count(8388608) == 2
    by_size = {row.size_bytes: row for row in r.rows}
    assert by_size[2].bw_avg_gbps == approx(5.30 * MB_PER_S_TO_GBPS)
    assert by_size[65536].bw_avg_gbps == approx(21167.79 * MB_PER_S_TO_GBPS)
    assert by_size[1048576].bw_avg_gbps == approx(22816.86 * MB_PER_S_TO_GBPS)
    assert by_size[8388608].msg_rate_mpps == 0.002905
    assert r.bw_avg_gbps == approx(23240.68 * MB_PER_S_TO_GBPS)
    assert not r.run_infinitely


def test_ib_write_bw_header_without_row_is_parse_error() -> None:
    text = sample("perftest/ib_write_bw-gb10-client-q4-rdmacm.txt")
    cut = text[: text.index(" 65536      20000")]
    with pytest.raises(ParseError) as err:
        parse_ib_write_bw(cut)
    assert err.value.tool == "ib_write_bw"
    assert (
        "expected a result row under the '#bytes #iterations BW peak' header" in err.value.missing
    )
    # Where the output stopped, quoted from its last line.
    assert err.value.found is not None and "MsgRate[Mpps]" in err.value.found


# ---------------------------------------------------------------- nccl-tests


def test_nccl_gb10_all_gather_16g() -> None:
    r = parse_nccl_tests(sample("nccl-tests/gb10-dell-promax-all-gather-16G.txt"))
    assert (r.nccl_tests_version, r.nccl_library_version) == ("2.18.5", "22809")
    assert r.collective == "all_gather_perf"
    assert [(k.rank, k.group, k.host, k.name) for k in r.ranks] == [
        (0, 0, "promaxgb10-4c75", "NVIDIA GB10"),
        (1, 0, "promaxgb10-4c99", "NVIDIA GB10"),
    ]
    assert r.ranks[0].bus_id == "000f:01:00"
    assert len(r.rows) == 1
    row = r.rows[0]
    assert (row.size_bytes, row.redop, row.root) == (17179869184, "none", -1)
    assert (row.oop_busbw_gbytes_s, row.ip_busbw_gbytes_s) == (22.94, 22.98)
    assert (row.oop_wrong, row.ip_wrong) == (0, 0)
    assert r.avg_busbw_gbytes_s == 22.9611
    assert (r.out_of_bounds, r.out_of_bounds_ok) == (0, True)
    assert busbw_from_algbw(row.oop_algbw_gbytes_s, 2, "all_gather") == approx(22.94)


def test_nccl_cx5_info_ibext_elided() -> None:
    r = parse_nccl_tests(sample("nccl-tests/cx5-vf-2pod-all_reduce-nccl-info-ibext-elided.txt"))
    assert r.nccl_version == "2.21.5+cuda12.4"
    assert r.ranks == ()
    assert [(t.host, t.net, t.devices, t.ports, t.link_layers) for t in r.transports] == [
        ("pod-vf08", "IB", ("mlx5_2",), (1,), ("RoCE",)),
        ("pod-vf07", "IB", ("mlx5_2",), (1,), ("RoCE",)),
    ]
    assert all(t.relaxed_ordering and not t.no_device for t in r.transports)
    assert r.networks_by_host() == {
        "pod-vf08": frozenset({"IBext_v8"}),
        "pod-vf07": frozenset({"IBext_v8"}),
    }
    assert r.ib_devices() == frozenset({"mlx5_2"})
    assert len(r.rows) == 11
    assert (r.rows[0].size_bytes, r.rows[-1].size_bytes) == (2097152, 2147483648)
    assert (r.rows[-1].oop_busbw_gbytes_s, r.rows[-1].ip_busbw_gbytes_s) == (2.84, 2.84)
    assert r.avg_busbw_gbytes_s == 2.61937


def test_nccl_h100_16_ranks_sweep_old_header() -> None:
    r = parse_nccl_tests(
        sample("nccl-tests/h100-gcp-a3mega-2node-16rank-all_reduce-8B-8G-sweep.txt")
    )
    assert r.nccl_tests_version is None and r.collective is None
    assert len(r.ranks) == 16
    assert {k.host for k in r.ranks} == {"ztan-mig-235z", "ztan-mig-gq73"}
    assert len(r.rows) == 31
    assert (r.rows[0].size_bytes, r.rows[-1].size_bytes) == (8, 8589934592)
    assert r.rows[0].oop_time_us == 135.8
    by_size = {row.size_bytes: row for row in r.rows}
    assert by_size[2147483648].oop_time_us == 12646.0
    assert (r.rows[-1].oop_busbw_gbytes_s, r.rows[-1].ip_busbw_gbytes_s) == (338.82, 337.35)
    assert r.max_busbw_gbytes_s == 338.82
    assert r.avg_busbw_gbytes_s == 70.742
    assert r.out_of_bounds_ok is True


def test_nccl_a100_old_format_error_column() -> None:
    r = parse_nccl_tests(
        sample("nccl-tests/a100x8-single-node-all_reduce-old-format-error-col-nccl-info-noise.txt")
    )
    assert (r.n_threads, r.n_gpus) == (1, 8)
    assert len(r.ranks) == 8
    assert all(k.group is None and k.host == "localhost" for k in r.ranks)
    assert r.ranks[0].name == "A100-SXM4-40GB"
    # INDEX.md says 35; the file holds 34 result lines (two of size 0).
    assert len(r.rows) == 34
    assert [row.size_bytes for row in r.rows[:2]] == [0, 0]
    assert all(row.root is None and row.oop_wrong is None for row in r.rows)
    assert (r.rows[-1].oop_busbw_gbytes_s, r.rows[-1].ip_busbw_gbytes_s) == (235.26, 235.03)
    assert r.avg_busbw_gbytes_s == 68.4048


def test_nccl_run_cut_before_average_is_none_not_zero() -> None:
    text = sample("nccl-tests/gb10-dell-promax-all-gather-16G.txt")
    r = parse_nccl_tests(text[: text.index("# Out of bounds")])
    assert r.avg_busbw_gbytes_s is None and not r.completed
    assert len(r.rows) == 1


# ---------------------------------------------------------------- iperf3


def test_iperf3_json_duplicate_keys() -> None:
    r = parse_iperf3_json(sample("iperf3/json-P4-60s-mininet-iperf3.6-duplicate-keys.txt"))
    assert r.error is None and r.ok
    assert r.version == "iperf 3.6" and r.protocol == "TCP"
    assert r.streams == 4
    assert r.sent_gbps == approx(17.544772693368183)
    assert r.received_gbps == approx(17.535714055219631)
    assert r.retransmits == 2
    assert r.cpu_host_pct == approx(49.71, abs=0.01)
    assert r.cpu_remote_pct == approx(37.84, abs=0.01)
    assert (r.local_host, r.remote_host) == ("10.0.0.1", "10.0.0.2")


def test_iperf3_error_key_is_a_result_not_a_parse_error() -> None:
    text = (
        '{"start": {"connected": [], "version": "iperf 3.16"}, "intervals": [], "end": {},'
        ' "error": "unable to connect to server - server may have stopped running"}'
    )
    r = parse_iperf3_json(text)
    assert r.error is not None and "unable to connect" in r.error
    assert r.sent_gbps is None and not r.ok


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
