"""Link state of every rail netdev: `ethtool` (speed, link detected) and `ethtool --show-fec`
(active FEC), every rail of every node in one concurrent round."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.ethtool import (
    EthtoolLink,
    FecInfo,
    build_ethtool,
    build_ethtool_fec,
    parse_ethtool,
    parse_ethtool_fec,
)
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "links"


@dataclass(frozen=True, slots=True)
class Links:
    """By rail id: what ethtool and ethtool --show-fec said (or why they could not tell)."""

    ethtool: Mapping[str, Measured[EthtoolLink]]
    fec: Mapping[str, Measured[FecInfo]]


def measure(fabric: Fabric) -> Links:
    rails = fabric.cluster.rails
    jobs = [Job(r.node, build_ethtool(r.netdev), QUICK_S) for r in rails]
    jobs += [Job(r.node, build_ethtool_fec(r.netdev), QUICK_S) for r in rails]
    results = fabric.run_all(jobs)
    eth, fec = results[: len(rails)], results[len(rails) :]
    return Links(
        ethtool={
            r.id: parsed(x, "ethtool", parse_ethtool) for r, x in zip(rails, eth, strict=True)
        },
        fec={
            r.id: parsed(x, "ethtool", parse_ethtool_fec) for r, x in zip(rails, fec, strict=True)
        },
    )


def ethtool(fabric: Fabric, rail: Rail) -> Measured[EthtoolLink]:
    return fabric.phase(NAME, measure).ethtool[rail.id]


def fec(fabric: Fabric, rail: Rail) -> Measured[FecInfo]:
    return fabric.phase(NAME, measure).fec[rail.id]
