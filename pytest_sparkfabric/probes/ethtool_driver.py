"""`ethtool -i <netdev>`: the driver, its version and the NIC firmware.

Format (ethtool's driver-info dump; samples in tests/probes/ethtool_i_samples/): `key: value` lines,
`driver`, `version` (the kernel release for the in-box mlx5, the MLNX_OFED/DOCA release when
that driver is installed), `firmware-version` (optionally followed by the PSID in
parentheses), `expansion-rom-version` (often empty), `bus-info`, then `supports-*` flags.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "ethtool -i"


@dataclass(frozen=True, slots=True)
class DriverInfo:
    driver: str
    version: str | None
    firmware_version: str | None
    bus_info: str | None


def build_ethtool_driver(netdev: str) -> shell.Command:
    return shell.join(["ethtool", "-i", netdev])


def parse_ethtool_driver(text: str) -> DriverInfo:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and key and key not in fields:
            fields[key.strip()] = value.strip()
    if not fields.get("driver"):
        raise ParseError(TOOL, "expected a 'driver: <name>' line", found_text(text))
    return DriverInfo(
        driver=fields["driver"],
        version=fields.get("version") or None,
        firmware_version=fields.get("firmware-version") or None,
        bus_info=fields.get("bus-info") or None,
    )
