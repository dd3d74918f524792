"""Key facts of real samples, checked apart from their expected JSON.

The golden test pins every parsed value; these tests restate the facts a reviewer checked
against each PROVENANCE.md (so a careless SPARKFABRIC_UPDATE_GOLDEN=1 cannot quietly accept a
wrong parse) and the relations between values that a JSON comparison cannot express (sums
across files, derived bandwidths, cut texts).
"""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nccl import busbw_from_algbw, parse_nccl_tests
from pytest_sparkfabric.probes.perftest import MB_PER_S_TO_GBPS, parse_ib_write_bw

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
