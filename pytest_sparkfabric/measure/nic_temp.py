"""The NICs' temperature: each node's ConnectX-7 hwmon sensors (mlx5, Linux >= 6.6), each judged
against its own temp*_crit/_max (DOMAIN.md §6, §9). Read idle once, by the first traffic phase
before it starts (`baseline`), and by the soak at each of its readings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.probes import sysfs
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "nic_baseline"

Sensor = tuple[str, float, float | None]
"""A NIC hwmon sensor: its path, temperature and own temp*_crit, else temp*_max (None: neither)."""


def sensors(r: RunResult) -> list[Sensor]:
    if not r.ok:
        return []
    files = sysfs.parse_read_files(r.stdout)
    limits = sysfs.hwmon_temps_c(files, "max", "crit")
    return [(p, t, limits.get(p)) for p, t in sorted(sysfs.hwmon_temps_c(files).items())]


def jobs(fabric: Fabric, nodes: Sequence[str]) -> list[Job]:
    """One read of each node's NIC hwmon sensors. One ConnectX-7 per box: the hwmon of its
    first fabric netdev is the NIC's temperature."""
    netdev = {n: fabric.cluster.node(n).rails[0].netdev for n in nodes}
    return [
        Job(n, sysfs.build_read_files([sysfs.hwmon_glob(netdev[n])], expand=True), QUICK_S)
        for n in nodes
    ]


def measure(fabric: Fabric) -> dict[str, float]:
    nodes = fabric.reachable()
    found = zip(nodes, fabric.run_all(jobs(fabric, nodes)), strict=True)
    return {n: max(x[1] for x in s) for n, r in found if (s := sensors(r))}


def baseline(fabric: Fabric) -> dict[str, float]:
    """Node -> its NIC's hottest hwmon reading while idle (none: left out)."""
    return fabric.phase(NAME, measure)
