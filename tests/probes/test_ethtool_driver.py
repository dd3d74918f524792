"""`ethtool -i` golden files (tests/probes/ethtool_i_samples/, provenance there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import parse_ethtool_driver

DATA = Path(__file__).resolve().parent / "ethtool_i_samples"


@pytest.mark.parametrize(
    ("name", "version", "firmware"),
    [
        # MLNX_OFED: its own version, the firmware with its PSID
        ("cx7-mlnx-ofed-23.10-fw-28.39.3560.txt", "23.10-3.2.2", "28.39.3560 (MT_0000000838)"),
        # GB10's inbox driver: the kernel release
        ("gb10-inbox-6.11-nvidia-fw-28.45.4028-excerpt.txt", "6.11.0-1014-nvidia", "28.45.4028"),
    ],
)
def test_driver_version_and_firmware(name: str, version: str, firmware: str) -> None:
    info = parse_ethtool_driver((DATA / name).read_text())
    assert (info.driver, info.version, info.firmware_version) == ("mlx5_core", version, firmware)


def test_no_driver_line_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="driver"):
        parse_ethtool_driver("Cannot get driver information: No such device\n")
