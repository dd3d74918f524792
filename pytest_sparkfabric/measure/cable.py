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
    from pytest_sparkfabric.cluster import Cluster, Node
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "cable"
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


def advisories(cluster: Cluster, module: ModuleEeprom) -> list[tuple[str, bool]]:
    """What in this EEPROM cannot be taken at face value (never a failure on its own): each
    text with whether it is worth a warning. A 0 dB attenuation is only noted: passive DACs
    often carry that placeholder (DOMAIN.md §6)."""
    notes: list[tuple[str, bool]] = []
    values = list(module.attenuation_db.values())
    if values and all(v == 0 for v in values):
        notes.append(
            ("attenuation reads 0 dB at every frequency: a placeholder, not a measurement", False)
        )
    if not module.length_m:
        notes.append(("no cable length in the EEPROM (a placeholder)", True))
    part = module.vendor_pn or ""
    if part and not cluster.approved_cable(module.vendor_name or "", part):
        notes.append(
            (
                f"{module.vendor_name or '?'} {part} is not on the approved cable list "
                "(cluster.yaml cables.approved)",
                True,
            )
        )
    return notes
