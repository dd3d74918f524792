"""`ethtool -i` golden files (tests/probes/ethtool_i_samples/, provenance there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import parse_ethtool_driver

DATA = Path(__file__).resolve().parent / "ethtool_i_samples"


def test_mlnx_ofed_driver_with_psid() -> None:
    info = parse_ethtool_driver((DATA / "cx7-mlnx-ofed-23.10-fw-28.39.3560.txt").read_text())
    assert info.driver == "mlx5_core"
    assert info.version == "23.10-3.2.2"
    assert info.firmware_version == "28.39.3560 (MT_0000000838)"


def test_gb10_inbox_driver_is_the_kernel_release() -> None:
    text = (DATA / "gb10-inbox-6.11-nvidia-fw-28.45.4028-excerpt.txt").read_text()
    info = parse_ethtool_driver(text)
    assert (info.version, info.firmware_version) == ("6.11.0-1014-nvidia", "28.45.4028")


def test_no_driver_line_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="driver"):
        parse_ethtool_driver("Cannot get driver information: No such device\n")
