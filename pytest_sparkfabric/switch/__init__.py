"""Read-only RouterOS switch access: clients (REST, sim, record/replay) and the reads."""

from __future__ import annotations

from pytest_sparkfabric.switch.client import (
    RecordingClient,
    ReplayClient,
    RestClient,
    SimClient,
    SwitchClient,
    SwitchError,
    SwitchUnreachable,
    make_client,
)
from pytest_sparkfabric.switch.reads import SwitchState, read_switch

__all__ = [
    "RecordingClient",
    "ReplayClient",
    "RestClient",
    "SimClient",
    "SwitchClient",
    "SwitchError",
    "SwitchState",
    "SwitchUnreachable",
    "make_client",
    "read_switch",
]
