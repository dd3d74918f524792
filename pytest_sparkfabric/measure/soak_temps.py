"""Temperatures of the heat soak (DOMAIN.md §6, §9): the NIC through hwmon, the cable module
through `ethtool -m`.

mlx5 exposes the NIC temperature as hwmon `temp*_input` (milli-degrees) from Linux 6.6, each
sensor with its own `temp*_crit` / `temp*_max`: each is judged against its own limit (else the
`nic_temp_max_c` default). The idle baseline is read once per session before the first traffic
phase (`baseline`): one read after the bandwidth and NCCL rounds is already warm. A module
with diagnostics reports its temperature and its own alarm thresholds in its EEPROM (SFF-8636
page 03h: "Module temperature high alarm threshold"); passive DACs read 0 and carry no
thresholds, so they are simply not judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import parse_ethtool_module
from pytest_sparkfabric.probes.sysfs import (
    build_read_globs,
    hwmon_glob,
    hwmon_limits_c,
    hwmon_temps_c,
    parse_read_files,
)
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric

MODULE_LIMIT_FIELD = "Module temperature high alarm threshold"
MODULE_ALARM_PREFIX = "module temperature high"


@dataclass(frozen=True, slots=True)
class ModuleTemp:
    temp_c: float | None
    limit_c: float | None
    """The module's own high alarm threshold, when its EEPROM has one."""
    alarm: str | None
    """A high temperature alarm or warning flag the module raised."""


NAME: PhaseName = "nic_baseline"


@dataclass(frozen=True, slots=True)
class Sensor:
    path: str
    temp_c: float
    limit_c: float | None
    """The sensor's own temp*_crit, else temp*_max; None when it has neither."""

    def describe(self) -> str:
        limit = f"{self.limit_c:g} C" if self.limit_c is not None else "none"
        return f"{self.path} {self.temp_c:.1f} C, its own limit {limit}"


def nic_sensors(r: RunResult) -> list[Sensor]:
    """Every NIC hwmon sensor one read of `hwmon_glob` gave (none: not readable)."""
    if not r.ok:
        return []
    files = parse_read_files(r.stdout)
    limits = hwmon_limits_c(files)
    return [Sensor(p, t, limits.get(p)) for p, t in sorted(hwmon_temps_c(files).items())]


def hwmon_jobs(fabric: Fabric, nodes: Sequence[str]) -> list[Job]:
    """One read of each node's NIC hwmon sensors. One ConnectX-7 per box: the hwmon of its
    first fabric netdev is the NIC's temperature."""
    netdev = {n: fabric.cluster.node(n).rails[0].netdev for n in nodes}
    return [Job(n, build_read_globs([hwmon_glob(netdev[n])]), QUICK_S) for n in nodes]


def measure(fabric: Fabric) -> dict[str, float]:
    """Node -> its NIC's hottest hwmon reading now (nodes without one are left out)."""
    nodes = fabric.reachable()
    jobs = hwmon_jobs(fabric, nodes)
    out: dict[str, float] = {}
    for name, r in zip(nodes, fabric.run_all(jobs), strict=True):
        temps = [x.temp_c for x in nic_sensors(r)]
        if temps:
            out[name] = max(temps)
    return out


def baseline(fabric: Fabric) -> dict[str, float]:
    """The NICs' idle temperatures: read once, by the first traffic phase before it starts."""
    return fabric.phase(NAME, measure)


def module_temp(r: RunResult) -> ModuleTemp | None:
    """What one `ethtool -m` says about temperature; None when it could not be read (no root,
    no module): the module is then not sampled."""
    if not r.ok:
        return None
    try:
        module = parse_ethtool_module(r.stdout)
    except ParseError:
        return None
    limit = next(
        (d for k, v in module.fields if k == MODULE_LIMIT_FIELD and (d := degrees(v)) is not None),
        None,
    )
    alarm = next((a for a in module.alarms_on if a.lower().startswith(MODULE_ALARM_PREFIX)), None)
    return ModuleTemp(module.temp_c, limit, alarm)


def degrees(value: str) -> float | None:
    """`60.00 degrees C / 140.00 degrees F` -> 60.0."""
    head = value.split("degrees", 1)[0].strip()
    try:
        return float(head)
    except ValueError:
        return None
