"""What every report says about the run: the cluster under test and the safety warnings.

Built once when the plugin configures (from cluster.yaml, before any test runs) and handed to
each report plugin, so no report needs the session or the plugin to find it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_sparkfabric.diagnosis.causes import RootCauses

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster


def _no_causes() -> RootCauses:
    return RootCauses()


@dataclass(frozen=True, slots=True)
class ReportData:
    cluster_file: str | None
    """The cluster file as given (None: built in memory)."""
    topology: str
    nodes: tuple[str, ...]
    transport: str
    mtu: int
    warnings: tuple[str, ...]
    """One line per way the run is less safe than by default (switch.allow_http, ...)."""
    causes: Callable[[], RootCauses] = _no_causes
    """The run's root causes so far (asked at the end: the session groups its failures)."""
    ports: tuple[tuple[int, ...], ...] = ()
    """Per node (in `nodes` order), its cabled QSFP ports."""
    switch: str | None = None
    """The switch's host (switch topology)."""

    @classmethod
    def of(
        cls,
        cluster: Cluster,
        warnings: Sequence[str],
        causes: Callable[[], RootCauses] = _no_causes,
    ) -> ReportData:
        return cls(
            cluster_file=str(cluster.source) if cluster.source else None,
            topology=cluster.topology,
            nodes=tuple(n.name for n in cluster.nodes),
            transport=cluster.spec.transport,
            mtu=cluster.mtu,
            warnings=tuple(warnings),
            causes=causes,
            ports=tuple(n.ports for n in cluster.nodes),
            switch=str(cluster.spec.switch.host) if cluster.spec.switch else None,
        )

    @property
    def file_name(self) -> str:
        return Path(self.cluster_file).name if self.cluster_file else "cluster.yaml"

    @property
    def name(self) -> str:
        """The cluster's name in reports: its file's name without the suffix."""
        return Path(self.file_name).stem

    def cluster_doc(self) -> dict[str, object]:
        """The results document's `cluster`."""
        return {
            "name": self.name,
            "path": self.cluster_file,
            "topology": self.topology,
            "transport": self.transport,
            "nodes": [
                {"name": n, "ports": list(p)}
                for n, p in zip(self.nodes, self.ports or [()] * len(self.nodes), strict=True)
            ],
            "switch": self.switch,
        }
