"""The simulated cluster (`transport: sim`): Spark boxes, cables, a switch and injected faults,
answering the real tools' command lines in the real tools' output formats, on a virtual clock.

Entry points: `SimTransport(cluster)` (the Transport), `SimCluster.from_cluster(cluster)` (the
static model), `SimSwitch` (RouterOS REST reads of the switch), and the lab CLI
`python -m sparkfabric_sim.tool`.
"""

from __future__ import annotations

__all__ = ["SimCluster", "SimSwitch", "SimTransport"]


def __getattr__(name: str) -> object:
    # Lazy: importing the package must not build the simulator.
    if name == "SimTransport":
        from sparkfabric_sim.transport import SimTransport

        return SimTransport
    if name == "SimCluster":
        from sparkfabric_sim.model import SimCluster

        return SimCluster
    if name == "SimSwitch":
        from sparkfabric_sim.switch import SimSwitch

        return SimSwitch
    raise AttributeError(name)
