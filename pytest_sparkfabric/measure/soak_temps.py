"""Temperatures of the heat soak (DOMAIN.md §6): the NIC through hwmon, the cable module
through `ethtool -m`.

mlx5 exposes the NIC temperature as hwmon `temp*_input` (milli-degrees) from Linux 6.6. A module
with diagnostics reports its temperature and its own alarm thresholds in its EEPROM (SFF-8636
page 03h: "Module temperature high alarm threshold"); passive DACs read 0 and carry no
thresholds, so they are simply not judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import parse_ethtool_module
from pytest_sparkfabric.probes.sysfs import (
    build_read_globs,
    hwmon_glob,
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


def nic_now_c(fabric: Fabric, nodes: Sequence[str]) -> dict[str, float]:
    """Node -> its NIC's hottest hwmon reading now (nodes without one are left out).

    One ConnectX-7 per box: the hwmon of its first fabric netdev is the NIC's temperature."""
    cluster = fabric.cluster
    jobs = [
        Job(name, build_read_globs([hwmon_glob(cluster.node(name).rails[0].netdev)]), QUICK_S)
        for name in nodes
    ]
    out: dict[str, float] = {}
    for name, r in zip(nodes, fabric.run_all(jobs), strict=True):
        temps = list(hwmon_temps_c(parse_read_files(r.stdout)).values()) if r.ok else []
        if temps:
            out[name] = max(temps)
    return out


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
