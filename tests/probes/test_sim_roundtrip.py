"""The simulator's tool outputs round-trip through the parsers (hypothesis).

Renderers of ``sparkfabric_sim.render`` are fed random values, and the parser of that tool must
read the same values back (ethtool -S, ip -j and a finished iperf3 run round-trip in
tests/sim/test_fidelity.py). test_sim_formats.py holds the renderers against the real samples.
"""

from __future__ import annotations

import re
from ipaddress import IPv6Address

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import (
    parse_ethtool,
    parse_ethtool_fec,
    parse_ethtool_module,
)
from pytest_sparkfabric.probes.gpu_burn import parse_gpu_burn
from pytest_sparkfabric.probes.ibdev2netdev import parse_ibdev2netdev
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nccl import parse_nccl_tests
from pytest_sparkfabric.probes.nvidia_smi import (
    QUERY_FIELDS,
    parse_gpu_query,
    parse_nvidia_smi_csv,
)
from pytest_sparkfabric.probes.perftest import MB_PER_S_TO_GBPS, parse_ib_write_bw
from pytest_sparkfabric.probes.ping import parse_ping
from sparkfabric_sim.hardware import NVIDIA_DAC
from sparkfabric_sim.render import ethtool as r_ethtool
from sparkfabric_sim.render import iperf3 as r_iperf3
from sparkfabric_sim.render import misc as r_misc
from sparkfabric_sim.render import nccl as r_nccl
from sparkfabric_sim.render import perftest as r_perftest
from sparkfabric_sim.render import ping as r_ping

PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

netdev = st.sampled_from(["enp1s0f0np0", "enp1s0f1np1", "enP2p1s0f0np0", "enP2p1s0f1np1"])
rdma = st.sampled_from(["rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"])


# ================================================================ round trips


def _qp(i: int) -> r_perftest.QpEnd:
    return r_perftest.QpEnd(
        0x100 + i, 0x5000 + i, 0x2000, 0x7F0000000000, IPv6Address(f"::ffff:10.0.0.{i + 1}")
    )


@PROPS
@given(
    device=rdma,
    qps=st.integers(1, 8),
    mtu=st.sampled_from([1024, 2048, 4096]),
    gid=st.integers(0, 7),
    server=st.booleans(),
    gbits=st.booleans(),
    duration=st.booleans(),
    size=st.sampled_from([65536, 1048576, 8388608]),
    iterations=st.integers(1, 10**7),
    avg=st.floats(0.5, 400, allow_nan=False),
)
def test_perftest_report_round_trip(
    device: str,
    qps: int,
    mtu: int,
    gid: int,
    server: bool,
    gbits: bool,
    duration: bool,
    size: int,
    iterations: int,
    avg: float,
) -> None:
    t = r_perftest.BwTest(
        device, qps, server, mtu, gid, [_qp(i) for i in range(qps)], [_qp(9)] * qps
    )
    peak = 0.0 if duration else avg * 1.01
    text = r_perftest.report(
        t,
        duration_mode=duration,
        gbits=gbits,
        size=size,
        iterations=iterations,
        avg_gbps=avg,
        peak_gbps=peak,
    )
    r = parse_ib_write_bw(text)
    assert (r.device, r.qps, r.mtu_bytes, r.gid_index) == (device, qps, mtu, gid)
    assert r.reported_unit == ("Gb/sec" if gbits else "MB/sec") and r.no_peak_warning == duration
    (row,) = r.rows
    assert (row.size_bytes, row.iterations) == (size, iterations)
    tolerance = 0.006 if gbits else 0.006 * MB_PER_S_TO_GBPS
    assert row.bw_avg_gbps == pytest.approx(avg, abs=tolerance)
    assert row.msg_rate_mpps == pytest.approx(avg * 1e9 / 8 / size / 1e6, abs=1e-6)


def test_perftest_failures_are_parse_errors_quoting_the_tool() -> None:
    t = r_perftest.BwTest("rocep1s0f1", 1, False, 4096, 3, [_qp(0)], [_qp(1)])
    no_row = r_perftest.report(
        t, duration_mode=True, gbits=True, size=65536, iterations=1, avg_gbps=None, peak_gbps=0
    )
    with pytest.raises(ParseError, match="expected a result row"):
        parse_ib_write_bw(no_row)
    with pytest.raises(ParseError, match=re.escape("Couldn't connect to 10.0.0.2:18515")):
        parse_ib_write_bw(r_perftest.connect_failed("10.0.0.2", 18515))
    with pytest.raises(ParseError, match="IB device rocep9s0f0 not found"):
        parse_ib_write_bw(r_perftest.no_device("rocep9s0f0"))


@PROPS
@given(
    dev=netdev,
    size=st.integers(0, 8972),
    rtts=st.lists(st.floats(0.01, 9.0, allow_nan=False), min_size=1, max_size=5),
    lost=st.integers(0, 3),
)
def test_ping_round_trip(dev: str, size: int, rtts: list[float], lost: int) -> None:
    dst = "192.168.100.12"
    text = r_ping.header(dst, "192.168.100.11", dev, size)
    text += "".join(r_ping.reply(dst, size, i + 1, rtt) for i, rtt in enumerate(rtts))
    sent = len(rtts) + lost
    text += r_ping.statistics(dst, sent, len(rtts), 0, 1000 * sent, rtts)
    r = parse_ping(text, "", 0 if lost == 0 else 1)
    assert (r.transmitted, r.received, r.errors) == (sent, len(rtts), 0)
    assert r.verdict == ("ok" if lost == 0 else "lost")
    assert r.rtt_avg_ms == pytest.approx(sum(rtts) / len(rtts), abs=0.0006)


@PROPS
@given(mtu=st.sampled_from([1500, 4200, 9000]), count=st.integers(1, 5))
def test_ping_local_mtu_round_trip(mtu: int, count: int) -> None:
    stdout = r_ping.header("10.0.0.2", None, "enp1s0f1np1", mtu + 100)
    stdout += r_ping.statistics("10.0.0.2", count, 0, count, 10, [])
    r = parse_ping(stdout, r_ping.local_mtu_error(mtu) * count, 1)
    assert (r.verdict, r.local_mtu_error, r.errors) == ("local_mtu", mtu, count)


nccl_row = st.builds(
    r_nccl.Row,
    size=st.integers(1, 2**34),
    count=st.integers(1, 2**32),
    type=st.sampled_from(["float", "half", "bfloat16"]),
    redop=st.sampled_from(["sum", "none"]),
    oop_us=st.floats(1, 10**6, allow_nan=False),
    oop_algbw=st.floats(0, 999, allow_nan=False),
    oop_busbw=st.floats(0, 999, allow_nan=False),
    ip_us=st.floats(1, 10**6, allow_nan=False),
    ip_algbw=st.floats(0, 999, allow_nan=False),
    ip_busbw=st.floats(0, 999, allow_nan=False),
)


@PROPS
@given(
    rows=st.lists(nccl_row, min_size=1, max_size=6),
    avg=st.floats(0, 500, allow_nan=False),
    n=st.integers(2, 8),
)
def test_nccl_tests_round_trip(rows: list[r_nccl.Row], avg: float, n: int) -> None:
    ranks = [r_nccl.Rank(i, f"spark-{i + 1}", 1000 + i) for i in range(n)]
    binary = "all_gather_perf"
    text = r_nccl.header(binary, 1 << 30, 1 << 34, 2, ranks) + r_nccl.TABLE_HEAD
    text += "".join(r_nccl.row(r) for r in rows) + r_nccl.footer(binary, avg)
    r = parse_nccl_tests(text)
    assert [(k.rank, k.host, k.pid) for k in r.ranks] == [(k.rank, k.host, k.pid) for k in ranks]
    assert r.collective == binary and r.completed
    assert r.avg_busbw_gbytes_s == float(f"{avg:g}")
    for got, want in zip(r.rows, rows, strict=True):
        assert (got.size_bytes, got.count, got.type, got.redop, got.root) == (
            want.size,
            want.count,
            want.type,
            want.redop,
            -1,
        )
        assert got.oop_busbw_gbytes_s == pytest.approx(want.oop_busbw, abs=0.006)
        assert got.ip_algbw_gbytes_s == pytest.approx(want.ip_algbw, abs=0.006)
        assert got.oop_time_us == pytest.approx(want.oop_us, rel=0.01, abs=0.006)


gpu_value = st.one_of(
    st.integers(0, 120).map(str), st.floats(0, 600, allow_nan=False).map(lambda v: f"{v:.2f}")
)


@PROPS
@given(
    values=st.fixed_dictionaries({f: gpu_value for f in QUERY_FIELDS}),
    header=st.booleans(),
    units=st.booleans(),
    na=st.sampled_from([None, *QUERY_FIELDS]),
)
def test_nvidia_smi_csv_round_trip(
    values: dict[str, str], header: bool, units: bool, na: str | None
) -> None:
    if na is not None:
        values[na] = "[N/A]"
    text = r_misc.gpu_csv(QUERY_FIELDS, values, header, units)
    (record,) = parse_nvidia_smi_csv(text).records
    want = [None if values[f] == "[N/A]" else float(values[f]) for f in QUERY_FIELDS]
    assert [None if v is None else float(v) for v in record.values()] == want
    if header:
        assert list(record) == list(QUERY_FIELDS)
    (sample,) = parse_gpu_query(text)
    assert [sample.temp_c, sample.power_w, sample.sm_clock_mhz, sample.utilization_pct] == want


@PROPS
@given(rows=st.lists(st.tuples(rdma, netdev, st.booleans()), min_size=1, max_size=4))
def test_ibdev2netdev_round_trip(rows: list[tuple[str, str, bool]]) -> None:
    got = parse_ibdev2netdev(r_misc.ibdev2netdev(rows))
    assert [(g.rdma, g.netdev, g.up, g.port) for g in got] == [(a, b, c, 1) for a, b, c in rows]


@PROPS
@given(seconds=st.integers(1, 3600), percent=st.integers(10, 95), temp=st.integers(20, 95))
def test_gpu_burn_round_trip(seconds: int, percent: int, temp: int) -> None:
    r = parse_gpu_burn(r_misc.gpu_burn_output(seconds, percent, temp))
    assert (r.burn_s, r.all_ok, r.gpus) == (seconds, True, ("NVIDIA GB10",))
    assert r.last_progress is not None and r.last_progress.temps_c == (temp,)
    assert r.initialized[0].used_mb == int(119_000 * percent / 100)
    assert r.last_line == "GPU 0: OK"


@PROPS
@given(dev=netdev, link=st.booleans(), speed=st.sampled_from([100000, 200000]))
def test_ethtool_settings_and_fec_round_trip(dev: str, link: bool, speed: int) -> None:
    s = parse_ethtool(r_ethtool.settings(dev, link, speed))
    assert (s.interface, s.link_detected, s.speed_mbps) == (dev, link, speed if link else None)
    f = parse_ethtool_fec(r_ethtool.fec(dev, link))
    assert (f.interface, f.active, f.fec_active) == (dev, "RS" if link else "None", link)


@PROPS
@given(temp=st.floats(10, 90, allow_nan=False), volts=st.floats(3.0, 3.6, allow_nan=False))
def test_ethtool_module_round_trip(temp: float, volts: float) -> None:
    m = parse_ethtool_module(r_ethtool.module(NVIDIA_DAC, r_ethtool.ModuleReading(temp, volts)))
    assert (m.vendor_name, m.vendor_pn, m.length_m) == (
        "Amphenol",
        "NJAAKK-N911",
        float(NVIDIA_DAC.length_m),
    )
    assert m.temp_c == pytest.approx(temp, abs=0.006) and m.voltage_v == pytest.approx(
        volts, abs=6e-5
    )


def test_iperf3_error_document_is_a_result() -> None:
    err = parse_iperf3_json(
        r_iperf3.error_document("spark-1", "6.11", "aarch64", "unable to connect to server")
    )
    assert err.error == "error - unable to connect to server" and not err.ok
