"""What every transport shares: capped output in bounded memory, failure lines as text."""

from __future__ import annotations

import tracemalloc

import pytest

from pytest_sparkfabric.transport.base import missing_command
from pytest_sparkfabric.transport.process import CappedOutput, cap_text

MIB = 2**20


def test_a_stream_of_100_mb_costs_bounded_memory() -> None:
    out = CappedOutput(MIB)
    chunk = b"x" * 65536
    tracemalloc.start()
    try:
        for _ in range(100 * MIB // len(chunk)):
            out.add(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MIB
    marker = (
        f"\n[sparkfabric: {99 * MIB} bytes of output dropped here: only the first and last "
        f"{MIB // 2} bytes of a stream are kept (output_cap_mib in cluster.yaml)]\n"
    )
    assert out.dropped == 99 * MIB and out.text() == "x" * (MIB // 2) + marker + "x" * (MIB // 2)


def test_head_and_tail_are_kept_in_order_and_cap_text_cuts_alike() -> None:
    out = CappedOutput(10)
    for piece in (b"abc", b"defgh", b"ijklmnop", b"qrst"):
        out.add(piece)
    text = out.text()
    assert out.dropped == 10 and text.startswith("abcde\n[sparkfabric: 10 bytes of output dropped")
    assert text.endswith("]\npqrst")
    whole = CappedOutput(10)
    whole.add(b"0123456789")
    assert (whole.text(), whole.dropped) == ("0123456789", 0)  # within the cap: untouched
    assert cap_text("é" * 1000, 10).startswith("éé\ufffd\n[sparkfabric: 1990 bytes")
    assert cap_text("short", 10) == "short"
    once = cap_text("y" * 5000, 100)
    assert cap_text(once, 100) == once  # already cut: a recording keeps it as it is


@pytest.mark.parametrize(
    ("stderr", "tool"),
    [
        ("sh: 1: ethtool: not found\n", "ethtool"),
        ("bash: line 1: sudo: command not found\n", "sudo"),
        ("sudo: ib_write_bw: command not found\n", "ib_write_bw"),
        ("zsh:1: command not found: x\n", None),
        (" IB device rocep1s0f1 not found\n", None),
    ],
)
def test_the_missing_command_is_read_from_the_shell(stderr: str, tool: str | None) -> None:
    assert missing_command(stderr) == tool
