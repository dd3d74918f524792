"""What a golden JSON comparison cannot express (tests/probes/test_golden.py pins every parsed
value of every sample once): the published figures a sample stands for (PROVENANCE.md), sums
across files, unit conversions, texts cut short, and the parsers' methods and arguments the
JSON does not hold.
"""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.dmesg import parse_kernel_log
from pytest_sparkfabric.probes.nccl import parse_nccl_tests
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw

from .golden import sample

approx = pytest.approx
PLAYBOOK = "ib_write_bw/ib_write_bw-gb10-nvidia-playbook-client{}-run-infinitely-{}.txt"


def test_ib_write_bw_the_playbooks_figures_per_rail_and_together() -> None:
    rail0 = parse_ib_write_bw(sample(PLAYBOOK.format(1, "92.57")))
    rail1 = parse_ib_write_bw(sample(PLAYBOOK.format(2, "97.28")))
    assert rail0.bw_avg_gbps + rail1.bw_avg_gbps == approx(189.85, abs=0.02)


def test_ib_write_bw_mb_per_sec_is_mebibytes_and_agrees_with_the_message_rate() -> None:
    r = parse_ib_write_bw(
        sample("ib_write_bw/ib_write_bw-loopback-ib0-8M-server-and-client-superbench.txt")
    )
    # MB is 2^20 bytes in perftest: 24056.72 MB/sec is 201.8 Gb/s, not 2 x that.
    assert r.bw_avg_gbps == approx(24056.72 * 2**20 * 8 / 1e9)
    assert r.rows[0].msg_rate_mpps * 1e6 * 8388608 * 8 / 1e9 == approx(r.bw_avg_gbps, rel=1e-3)


def test_ib_write_bw_header_without_row_is_parse_error() -> None:
    text = sample("ib_write_bw/ib_write_bw-gb10-client-q4-rdmacm.txt")
    with pytest.raises(ParseError) as err:
        parse_ib_write_bw(text[: text.index(" 65536      20000")])
    assert err.value.tool == "ib_write_bw"
    assert (
        "expected a result row under the '#bytes #iterations BW peak' header" in err.value.missing
    )
    # Where the output stopped, quoted from its last line.
    assert err.value.found is not None and "MsgRate[Mpps]" in err.value.found


def test_nccl_run_cut_before_average_is_none_not_zero() -> None:
    text = sample("nccl-tests/gb10-dell-promax-all-gather-16G.txt")
    r = parse_nccl_tests(text[: text.index("# Out of bounds")])
    assert r.avg_busbw_gbytes_s is None and not r.completed
    assert len(r.rows) == 1


def test_kernel_log_since_keeps_the_events_of_the_window() -> None:
    # The sample's events are pinned by its golden file: two mlx5 link downs, no ixgbe link up.
    log = parse_kernel_log(
        sample("kernel-log/dmesg-tail-cx-mlx5-link-down-two-ports-mixed-noise-lkml.txt")
    )
    assert [e.time_s for e in log.since(18866.0) if e.kind == "link_down"] == [18866.05799]
