"""Host QoS per rail (DOMAIN.md §7): `mlnx_qos -i` where installed, else `dcb pfc show` (PFC
only: no trust read for mlx5, research/FACTS.md §8); neither is "not measured", never "PFC off"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.probes.mlnx_qos import (
    build_dcb_pfc,
    build_mlnx_qos,
    parse_dcb_pfc,
    parse_mlnx_qos,
)
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Rail
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "qos"


@dataclass(frozen=True, slots=True)
class HostQos:
    """One rail's QoS as its host reports it; `trust` None where the tool cannot say."""

    pfc_priorities: tuple[int, ...]
    trust: str | None
    tool: str

    @property
    def lossless(self) -> bool:
        return bool(self.pfc_priorities)

    def describe(self) -> str:
        pfc = f"PFC on priority {','.join(map(str, self.pfc_priorities))}"
        trust = f", trust {self.trust}" if self.trust else ""
        return f"{pfc if self.pfc_priorities else 'PFC off'}{trust} ({self.tool})"


def _missing(r: RunResult) -> bool:
    """The shell could not find the tool (not a transport error or a deadline)."""
    return r.rc == 127 and not r.transport_error and not r.timed_out


def _from_mlnx_qos(r: RunResult, rail: Rail) -> Measured[HostQos]:
    m = parsed(r, "mlnx_qos", parse_mlnx_qos)
    if m.value is None:
        return Measured(error=m.error, unmeasured=m.unmeasured)
    q = m.value
    if q.pfc_priorities is None:
        why = f"{rail.node} `mlnx_qos -i {rail.netdev}` printed no PFC table"
        return Measured.not_measured(NotMeasured(why, nodes=[rail.node]))
    return Measured.of(
        HostQos(q.pfc_priorities, q.trust if q.trust != "none" else None, "mlnx_qos")
    )


def _from_dcb(r: RunResult, rail: Rail) -> Measured[HostQos]:
    if _missing(r):
        why = NotMeasured(
            f"{rail.node} has neither mlnx_qos (mlnx-tools) nor dcb (iproute2) to read "
            f"{rail.netdev}'s PFC",
            nodes=[rail.node],
            missing="mlnx_qos or dcb",
            fix="sudo apt install iproute2 (dcb), or mlnx-tools (mlnx_qos)",
        )
        return Measured.not_measured(why)
    m = parsed(r, "dcb", parse_dcb_pfc)
    if m.value is None:
        return Measured(error=m.error, unmeasured=m.unmeasured)
    return Measured.of(HostQos(m.value.pfc_priorities or (), None, "dcb"))


def measure(fabric: Fabric) -> Mapping[str, Measured[HostQos]]:
    down = fabric.unreachable()
    out: dict[str, Measured[HostQos]] = {
        r.id: Measured.not_measured(gone)
        for r in fabric.cluster.rails
        if (gone := fabric.gone([r.node])) is not None
    }
    rails = [r for r in fabric.cluster.rails if r.node not in down]
    if not rails:
        return out
    fabric.progress(f"host QoS: mlnx_qos on {len(rails)} rails")
    results = fabric.run_all([Job(r.node, build_mlnx_qos(r.netdev), QUICK_S) for r in rails])
    out |= {
        r.id: _from_mlnx_qos(x, r) for r, x in zip(rails, results, strict=True) if not _missing(x)
    }
    fallback = [r for r in rails if r.id not in out]
    jobs = [Job(r.node, build_dcb_pfc(r.netdev), QUICK_S) for r in fallback]
    out |= {r.id: _from_dcb(x, r) for r, x in zip(fallback, fabric.run_all(jobs), strict=True)}
    return out


def rail_qos(fabric: Fabric, rail: Rail) -> Measured[HostQos]:
    return fabric.phase(NAME, measure)[rail.id]


def node_qos(fabric: Fabric, node: str) -> Measured[HostQos]:
    """The node's QoS when all its rails agree and were read; else why not (the first rail
    that could not be read, or the rails that disagree)."""
    reads = [(r, rail_qos(fabric, r)) for r in fabric.cluster.node(node).rails]
    if unread := next((m for _, m in reads if m.value is None), None):
        return unread
    seen = {r.netdev: m.get() for r, m in reads}
    kinds = {q.pfc_priorities for q in seen.values()}
    if len(kinds) > 1:
        text = "; ".join(f"{dev} {q.describe()}" for dev, q in seen.items())
        return Measured.failed(f"{node}: its rails disagree: {text}")
    return Measured.of(next(iter(seen.values())))
