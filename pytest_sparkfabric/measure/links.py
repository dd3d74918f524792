"""The link layer, each read in one concurrent round: `ethtool` and `ethtool --show-fec` per
rail netdev; the module EEPROM per cabled port (`ethtool -m`, advisory only, DOMAIN.md §6); the
RoCE port per rail (`ibv_devinfo`: state, active MTU, DOMAIN.md §9)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ethtool as tool
from pytest_sparkfabric.probes.ethtool import ModuleEeprom
from pytest_sparkfabric.probes.ibv_devinfo import IbvPort, build_ibv_devinfo, parse_ibv_devinfo
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Node, Rail
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.probes.ethtool import EthtoolLink, FecInfo
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "links"
CABLE: PhaseName = "cable"
ROCE_PORT: PhaseName = "rdma_path"
READ_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class Links:
    """By rail id: what ethtool and ethtool --show-fec said (or why they could not tell)."""

    ethtool: Mapping[str, Measured[EthtoolLink]]
    fec: Mapping[str, Measured[FecInfo]]


def measure(fabric: Fabric) -> Links:
    rails = fabric.cluster.rails
    jobs = [Job(r.node, tool.build_ethtool(r.netdev), QUICK_S) for r in rails]
    jobs += [Job(r.node, tool.build_ethtool_fec(r.netdev), QUICK_S) for r in rails]
    results = fabric.run_all(jobs)
    eth, fec = zip(rails, results, strict=False), zip(rails, results[len(rails) :], strict=True)
    return Links(
        {r.id: parsed(x, "ethtool", tool.parse_ethtool) for r, x in eth},
        {r.id: parsed(x, "ethtool", tool.parse_ethtool_fec) for r, x in fec},
    )


def ethtool(fabric: Fabric, rail: Rail) -> Measured[EthtoolLink]:
    return fabric.phase(NAME, measure).ethtool[rail.id]


def fec(fabric: Fabric, rail: Rail) -> Measured[FecInfo]:
    return fabric.phase(NAME, measure).fec[rail.id]


# -- the cable's module EEPROM ------------------------------------------------------------------


Modules = Mapping[tuple[str, int], Measured[ModuleEeprom]]
"""By (node, port): the module EEPROM of every cabled port, or why it could not be read."""


def measure_modules(fabric: Fabric) -> Modules:
    ports = [(n, port) for n in fabric.cluster.nodes for port in n.ports]
    cmd = tool.build_ethtool_module
    jobs = [Job(n.name, cmd(n.rail(p, 0).netdev), READ_TIMEOUT_S, sudo=True) for n, p in ports]
    done = zip(ports, fabric.run_all(jobs), strict=True)
    return {(n.name, p): parsed(r, "ethtool -m", tool.parse_ethtool_module) for (n, p), r in done}


def module(fabric: Fabric, node: Node, port: int) -> Measured[ModuleEeprom]:
    """What the module in `port` of `node` says it is (every port's read in one round)."""
    return fabric.phase(CABLE, measure_modules)[(node.name, port)]


def advisories(cluster: Cluster, module: ModuleEeprom) -> list[tuple[str, bool]]:
    """What in this EEPROM cannot be taken at face value (never a failure on its own): each
    text with whether it is worth a warning. A 0 dB attenuation is only noted: passive DACs
    often carry that placeholder (DOMAIN.md §6)."""
    values = list(module.attenuation_db.values())
    part, vendor = module.vendor_pn or "", module.vendor_name or ""
    approved = not part or cluster.approved_cable(vendor, part)
    zero = "attenuation reads 0 dB at every frequency: a placeholder, not a measurement"
    listed = "is not on the approved cable list (cluster.yaml cables.approved)"
    notes = [
        (zero, False, bool(values) and all(v == 0 for v in values)),
        ("no cable length in the EEPROM (a placeholder)", True, not module.length_m),
        (f"{vendor or '?'} {part} {listed}", True, not approved),
    ]
    return [(text, warn) for text, warn, seen in notes if seen]


# -- the RoCE port ------------------------------------------------------------------------------


def _port(r: RunResult, rail: Rail) -> Measured[IbvPort]:
    got = parsed(r, "ibv_devinfo", parse_ibv_devinfo)
    if got.value is None:
        return Measured(error=got.error, unmeasured=got.unmeasured)
    mine = [p for p in got.value if p.device == rail.rdma and p.port == 1]
    if not mine:
        seen = ", ".join(p.device for p in got.value)
        return Measured.failed(f"{rail.node}: ibv_devinfo lists no {rail.rdma} port 1 ({seen})")
    return Measured.of(mine[0])


def measure_roce_ports(fabric: Fabric) -> dict[str, Measured[IbvPort]]:
    rails = fabric.cluster.rails
    results = fabric.run_all([Job(r.node, build_ibv_devinfo(r.rdma), QUICK_S) for r in rails])
    return {r.id: _port(x, r) for r, x in zip(rails, results, strict=True)}


def roce_port(fabric: Fabric, rail: Rail) -> Measured[IbvPort]:
    """The rail's RoCE device's port 1 (`ibv_devinfo`), or why it could not be read."""
    return fabric.phase(ROCE_PORT, measure_roce_ports)[rail.id]
