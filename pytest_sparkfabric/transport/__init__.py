"""The only code that touches the network: ssh, sim, replay, and recording around any of them,
for the nodes' commands and the switch's calls alike."""

from __future__ import annotations

from pytest_sparkfabric.transport.base import (
    Background,
    Clock,
    Job,
    RealClock,
    RunResult,
    Transport,
    VirtualClock,
)
from pytest_sparkfabric.transport.factory import make_transport

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
