"""The RDMA path, read only: each rail's RoCE port as `ibv_devinfo` reports it (state, active
MTU), every rail of every node in one concurrent round.

A RoCE port's active MTU follows its netdev's MTU (4096 at 9000, 1024 at 1500), so a port
below the cluster's figure sends small RDMA packets however the pings look (DOMAIN.md §9).
`ibv_devinfo` comes with rdma-core's ibverbs-utils; where it is missing the check is not
measured, with the command that installs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.probes.ibv_devinfo import IbvPort, build_ibv_devinfo, parse_ibv_devinfo
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "rdma_path"
INSTALL = "sudo apt install ibverbs-utils"


@dataclass(frozen=True, slots=True)
class RdmaPath:
    ports: Mapping[str, Measured[IbvPort]]
    """By rail id: its RoCE device's port 1, or why it could not be read."""


def _port(r: RunResult, rail: Rail) -> Measured[IbvPort]:
    if r.rc == 127:
        return Measured.not_measured(
            NotMeasured(
                f"{rail.node}: ibv_devinfo: command not found (reads {rail.rdma}'s active MTU)",
                nodes=[rail.node],
                missing="ibv_devinfo",
                fix=INSTALL,
            )
        )
    got = parsed(r, "ibv_devinfo", parse_ibv_devinfo)
    if got.value is None:
        return Measured(error=got.error, unmeasured=got.unmeasured)
    mine = [p for p in got.value if p.device == rail.rdma and p.port == 1]
    if not mine:
        seen = ", ".join(p.device for p in got.value)
        return Measured.failed(f"{rail.node}: ibv_devinfo lists no {rail.rdma} port 1 ({seen})")
    return Measured.of(mine[0])


def measure(fabric: Fabric) -> RdmaPath:
    rails = fabric.cluster.rails
    results = fabric.run_all([Job(r.node, build_ibv_devinfo(r.rdma), QUICK_S) for r in rails])
    return RdmaPath({r.id: _port(x, r) for r, x in zip(rails, results, strict=True)})


def port(fabric: Fabric, rail: Rail) -> Measured[IbvPort]:
    return fabric.phase(NAME, measure).ports[rail.id]
