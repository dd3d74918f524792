"""Cable EEPROM: what each cabled port says it holds (DOMAIN.md §6).

Read with `ethtool -m` (root). The values are advisory: copper length is whole metres, and
attenuation is often a 0 dB placeholder, so nothing here fails a cable by itself; a test records
vendor, part, serial, length and type, and warns about what cannot be trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import PhaseName, parsed
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.ethtool import (
    ModuleEeprom,
    build_ethtool_module,
    parse_ethtool_module,
)
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Node
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "cable"
# NVIDIA-approved Spark cables (DOMAIN.md §6): vendor part numbers, upper case.
APPROVED_PARTS = ("NJAAKK-N911", "NJAAKK0006", "LMTQF022-SD-R")
READ_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class Modules:
    """By (node, port): the module EEPROM of every cabled port, or why it could not be read."""

    ports: Mapping[tuple[str, int], Measured[ModuleEeprom]]


def measure(fabric: Fabric) -> Modules:
    keys: list[tuple[str, int]] = []
    jobs: list[Job] = []
    for node in fabric.cluster.nodes:
        for port in node.ports:
            netdev = node.rail(port, 0).netdev
            keys.append((node.name, port))
            jobs.append(Job(node.name, build_ethtool_module(netdev), READ_TIMEOUT_S, sudo=True))
    results = fabric.run_all(jobs)
    return Modules(
        {
            key: parsed(r, "ethtool -m", parse_ethtool_module)
            for key, r in zip(keys, results, strict=True)
        }
    )


def module(fabric: Fabric, node: Node, port: int) -> Measured[ModuleEeprom]:
    """What the module in `port` of `node` says it is (every port's read in one round)."""
    return fabric.phase(NAME, measure).ports[(node.name, port)]


def advisories(module: ModuleEeprom) -> list[str]:
    """What in this EEPROM cannot be taken at face value (never a failure on its own)."""
    notes = []
    values = list(module.attenuation_db.values())
    if values and all(v == 0 for v in values):
        notes.append("attenuation reads 0 dB at every frequency: a placeholder, not a measurement")
    if module.length_m is None:
        notes.append("no cable length in the EEPROM")
    part = (module.vendor_pn or "").upper()
    if part and not any(part.startswith(p) for p in APPROVED_PARTS):
        notes.append(f"part {module.vendor_pn} is not on NVIDIA's approved Spark cable list")
    return notes
