"""pytest-sparkfabric: accept or reject the network fabric of a DGX Spark cluster.

What your own checks need (the nouns, `Fabric`, `Verdict`, `Measured` / `NotMeasured`, `Results`,
`Job` / `RunResult`), each imported on first use: pytest loads this package in every run, and
without --cluster it must stay inert and cheap."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster as Cluster
    from pytest_sparkfabric.cluster import Node as Node
    from pytest_sparkfabric.cluster import Rail as Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink as DirectedLink
    from pytest_sparkfabric.cluster.plan import Link as Link
    from pytest_sparkfabric.cluster.plan import NodePair as NodePair
    from pytest_sparkfabric.measure.engine import Fabric as Fabric
    from pytest_sparkfabric.outcome import Measured as Measured
    from pytest_sparkfabric.outcome import NotMeasured as NotMeasured
    from pytest_sparkfabric.results import Results as Results
    from pytest_sparkfabric.transport.base import Job as Job
    from pytest_sparkfabric.transport.base import RunResult as RunResult
    from pytest_sparkfabric.verdict import Verdict as Verdict

    __version__: str

_HOMES = {
    name: f"pytest_sparkfabric.{home}"
    for home, names in (
        ("cluster", "Cluster Node Rail"),
        ("cluster.plan", "Link DirectedLink NodePair"),
        ("measure.engine", "Fabric"),
        ("outcome", "Measured NotMeasured"),
        ("results", "Results"),
        ("transport.base", "Job RunResult"),
        ("verdict", "Verdict"),
    )
    for name in names.split()
}

__all__ = sorted([*_HOMES, "__version__"])


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pytest-sparkfabric")
        except PackageNotFoundError:
            return "unknown (not installed)"
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pytest_sparkfabric' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
