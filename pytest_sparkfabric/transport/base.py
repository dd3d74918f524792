"""The one I/O seam: jobs go in, RunResults come out, every command under a deadline."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import testinfra.host


@dataclass(frozen=True, slots=True)
class Job:
    """One command for one node. `timeout_s` is mandatory: nothing runs without a deadline."""

    node: str
    command: str
    timeout_s: float
    sudo: bool = False


@dataclass(frozen=True, slots=True)
class RunResult:
    node: str
    command: str
    rc: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    transport_error: str | None = None
    started_at: float = 0.0

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out and self.transport_error is None

    def failure(self) -> str | None:
        """One line saying why this run produced nothing usable, or None if it ran."""
        if self.transport_error:
            return self.transport_error
        if self.timed_out:
            return (
                f"{self.node}: `{self.command}` did not finish within its deadline "
                f"({self.duration_s:.0f} s) and was ended"
            )
        if self.rc == 127:
            tool = self.command.split()[0] if self.command.split() else self.command
            return f"{self.node}: {tool}: command not found (install it, or fix PATH)"
        return None


class Background(Protocol):
    """A command running on a node; it always ends by its own deadline at the latest."""

    job: Job

    def wait(self) -> RunResult: ...

    def stop(self) -> RunResult: ...


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


class VirtualClock:
    """Time that only moves when told to: soak loops run in seconds, deterministically."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)

    def advance_to(self, t: float) -> None:
        with self._lock:
            self._now = max(self._now, t)


MAX_CHANNELS_PER_NODE = 8


class Transport(ABC):
    """Runs commands on the cluster's nodes. Subclasses: ssh, sim, replay, recording."""

    clock: Clock

    @abstractmethod
    def run(self, job: Job) -> RunResult: ...

    @abstractmethod
    def start(self, job: Job) -> Background: ...

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        """Run jobs concurrently (results in job order); per-node limits apply inside `run`."""
        if len(jobs) <= 1:
            return [self.run(j) for j in jobs]
        pool = ThreadPoolExecutor(max_workers=min(64, len(jobs)))
        try:
            return list(pool.map(self.run, jobs))
        except BaseException:
            # Ctrl-C: do not wait for the jobs' deadlines; end what is running on the nodes.
            pool.shutdown(wait=False, cancel_futures=True)
            self.close()
            raise
        finally:
            pool.shutdown(wait=False)

    def host(self, node: str) -> testinfra.host.Host:
        """A testinfra Host whose commands go through this transport (deadline included)."""
        from pytest_sparkfabric.transport.testinfra_backend import make_host

        return make_host(self, node)

    def close(self) -> None:  # noqa: B027 - transports without connections need no cleanup
        """End every background process and connection this transport opened."""
