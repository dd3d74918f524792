"""A measurement that either happened or says precisely why it did not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class NotMeasured(Exception):
    """Raised by `Measured.get()`; a test that needed the value fails with this reason."""


@dataclass(frozen=True, slots=True)
class Measured(Generic[T]):
    value: T | None = None
    error: str | None = None

    @classmethod
    def of(cls, value: T) -> Measured[T]:
        return cls(value=value)

    @classmethod
    def failed(cls, reason: str) -> Measured[T]:
        return cls(error=reason)

    def get(self) -> T:
        if self.error is not None or self.value is None:
            raise NotMeasured(self.error or "no value")
        return self.value
