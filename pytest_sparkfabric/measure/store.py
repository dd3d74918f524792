"""What the measurement phases left behind in this session, read without running anything."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric

STORE_KEY = ("sparkfabric.measure", "store")
T = TypeVar("T")


@dataclass
class Store:
    """Filled by each phase when it has run; the diagnosis reads it as evidence."""

    phases: dict[str, Any] = field(default_factory=dict)

    def get(self, phase: str) -> Any:
        return self.phases.get(phase)


def store(fabric: Fabric) -> Store:
    return fabric.once(STORE_KEY, Store)


def phase(fabric: Fabric, name: str, compute: Callable[[], T]) -> T:
    """Run `compute()` once per session under `name`, and keep its result in the store."""

    def run() -> T:
        value = compute()
        store(fabric).phases[name] = value
        return value

    return fabric.once(("sparkfabric.measure", name), run)
