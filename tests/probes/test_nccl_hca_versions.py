"""The product's NCCL_IB_HCA reading against NCCL's own results, per NCCL version."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes.ncclconf import find_nccl_version, grammar_for, select_hcas
from tests.nccl_ib_hca_golden import DEVICES, cases, expected


@pytest.mark.parametrize(("value", "version"), cases())
def test_selection_matches_nccl(value: str | None, version: str) -> None:
    ver = find_nccl_version(f"NCCL version {version}+cuda13.0")
    assert ver is not None
    chosen = tuple(s.device for s in select_hcas(value, DEVICES, version=ver))
    assert chosen == expected(value, version)


def test_version_from_log_and_library() -> None:
    log = "spark-1:123:123 [0] NCCL INFO Bootstrap : Using enP7s7\nNCCL version 2.21.5+cuda12.4\n"
    assert find_nccl_version(log) == (2, 21, 5)
    libs = "/usr/lib/*/libnccl.so.2.* /usr/lib/aarch64-linux-gnu/libnccl.so.2.30.7\n"
    assert find_nccl_version(libs) == (2, 30, 7)
    assert find_nccl_version("/usr/lib/*/libnccl.so.2.*") is None


def test_unknown_version_reads_the_classic_grammar() -> None:
    assert grammar_for(None) == "classic"
    assert grammar_for((2, 30, 4)) == "classic"
    assert grammar_for((2, 30, 7)) == "rail_plane"
    assert grammar_for((2, 4, 8)) == "caret_only"
