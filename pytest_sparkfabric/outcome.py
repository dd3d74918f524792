"""A measurement that either happened or says precisely why it did not, and the one way a check
says it could not measure (`NotMeasured`): never a message prefix, never a fabric failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Generic, TypeVar

T = TypeVar("T")


class NotMeasured(Exception):
    """The check could not measure: a tool missing, sudo refused, a node that does not answer.

    `reason` is one line saying what is missing where (`spark-2: ib_write_bw: command not
    found`); `nodes` where; `missing` names the prerequisite (`perftest`, `sudo ethtool -m`,
    `ssh`), so every check it stopped groups into one root cause; `fix` is the exact command that
    installs or allows it. The session records the item as not measured, never failed."""

    def __init__(
        self,
        reason: str,
        *,
        nodes: Sequence[str] = (),
        missing: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.nodes = tuple(nodes)
        self.missing = missing
        self.fix = fix

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments: pickle (xdist, multiprocessing) must pass them by name.
        again = partial(NotMeasured, nodes=self.nodes, missing=self.missing, fix=self.fix)
        return (again, (self.reason,))


@dataclass(frozen=True, slots=True)
class Measured(Generic[T]):
    """A value, or `error` (the tool ran and gave nothing usable: a fabric symptom), or
    `unmeasured` (the tool could not run at all: not the fabric's fault)."""

    value: T | None = None
    error: str | None = None
    unmeasured: NotMeasured | None = None

    @classmethod
    def of(cls, value: T) -> Measured[T]:
        return cls(value=value)

    @classmethod
    def failed(cls, reason: str) -> Measured[T]:
        return cls(error=reason)

    @classmethod
    def not_measured(cls, why: NotMeasured) -> Measured[T]:
        return cls(error=why.reason, unmeasured=why)

    def get(self) -> T:
        if self.unmeasured is not None:
            raise self.unmeasured
        if self.error is not None or self.value is None:
            raise NotMeasured(self.error or "no value")
        return self.value

    def require(self) -> Measured[T]:
        """Itself, unless it could not be measured at all (then NotMeasured is raised)."""
        if self.unmeasured is not None:
            raise self.unmeasured
        return self
