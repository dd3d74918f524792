"""The only code that touches the network: ssh, sim, replay, and recording around any of them,
for the nodes' commands and the switch's calls alike. `make_transport` is the only product code
that imports the simulator (`sparkfabric_sim`), and only when `transport: sim` is asked for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_sparkfabric.transport.base import (
    Background,
    Clock,
    Job,
    RealClock,
    RunResult,
    Transport,
    VirtualClock,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.transport.record import Recording

__all__ = [
    "Background",
    "Clock",
    "Job",
    "RealClock",
    "RunResult",
    "Transport",
    "VirtualClock",
    "make_transport",
]


def make_transport(
    cluster: Cluster, *, record_dir: Path | None = None, recording: Recording | None = None
) -> Transport:
    """The transport cluster.yaml asks for, recording into `record_dir` if given; `transport:
    replay` replays `recording` (None: it reads replay_dir)."""
    cap_bytes = cluster.spec.output_cap_mib * 2**20
    inner: Transport
    if cluster.spec.transport == "sim":
        from sparkfabric_sim.transport import SimTransport

        inner = SimTransport(cluster)
    elif cluster.spec.transport == "replay":
        from pytest_sparkfabric.transport.record import Recording, ReplayTransport

        base = cluster.source.parent if cluster.source else Path.cwd()
        inner = ReplayTransport(recording or Recording(base / str(cluster.spec.replay_dir)))
    else:
        from pytest_sparkfabric.transport.rest import spec_path
        from pytest_sparkfabric.transport.ssh import SshTarget, SshTransport

        targets = {n.name: SshTarget(**n.ssh.model_dump()) for n in cluster.nodes if n.ssh}
        cfg = spec_path(cluster.spec.ssh_config or None, cluster.source and cluster.source.parent)
        inner = SshTransport(
            targets, ssh_config=str(cfg) if cfg else None, output_cap_bytes=cap_bytes
        )
    if record_dir is not None:
        from pytest_sparkfabric.transport.record import RecordingTransport

        return RecordingTransport(inner, record_dir, output_cap_bytes=cap_bytes)
    return inner
