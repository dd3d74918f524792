"""The one I/O seam: jobs go in, RunResults come out, every command under a deadline; the switch's
read-only clients are handed out by the same transport."""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.transport.rest import SwitchClient, SwitchConsole


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
        """One line saying why this run produced nothing usable, or None if it ran (a missing
        tool, rc 127, is measure/prereq.py's `could_not_run`)."""
        if self.timed_out and not self.transport_error:
            return (
                f"{self.node}: `{self.command}` did not finish within its deadline "
                f"({self.duration_s:.0f} s) and was ended"
            )
        return self.transport_error


def not_run(job: Job, error: str) -> RunResult:
    """The result of a job that never ran; `error` is the one line saying why."""
    return RunResult(job.node, job.command, 255, "", "", 0.0, transport_error=error)


# dash: `sh: 1: ethtool: not found`; bash: `bash: line 1: ethtool: command not found`;
# sudo: `sudo: ethtool: command not found`.
_NOT_FOUND = re.compile(r"^(?:.*?: )?([^\s:]+): (?:command )?not found\s*$", re.M)


def missing_command(stderr: str) -> str | None:
    """The command a shell could not find, from its first complaint on stderr."""
    m = _NOT_FOUND.search(stderr)
    return m.group(1) if m else None


class Background(Protocol):
    """A command running on a node; it always ends by its own deadline at the latest."""

    job: Job

    def done(self) -> bool: ...  # whether it has ended on its own (never blocks, never signals)

    def wait(self) -> RunResult: ...

    def stop(self) -> RunResult: ...  # end it now (its whole process group) unless it ended


class Finished:
    """A command whose result is known already (replayed, or never started). `done()` is
    False the first `polls_running` times it is asked (None: always, until stopped)."""

    def __init__(self, job: Job, result: RunResult, polls_running: int | None = 0) -> None:
        self.job, self._result, self._polls_left = job, result, polls_running

    def done(self) -> bool:
        if self._polls_left is None:
            return False
        self._polls_left -= 1
        return self._polls_left < 0

    def wait(self) -> RunResult:
        return self._result

    stop = wait


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

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)

    sleep = advance

    def advance_to(self, t: float) -> None:
        with self._lock:
            self._now = max(self._now, t)


def step_through(clock: VirtualClock, end: float, every_s: float, tick: Callable[[], None]) -> None:
    """Move a modelled clock to `end` in steps of `every_s`, calling `tick()` at each step
    before `end`, as a real clock would have shown a sampler while the jobs ran."""
    t = clock.now() + every_s
    while t < end:
        clock.advance_to(t)
        tick()
        t += every_s
    clock.advance_to(end)


Tick = Callable[[], None]  # called while commands run (a switch sample); it must not raise


class Transport(ABC):
    """Runs commands on the cluster's nodes. Subclasses: ssh, sim, replay, recording."""

    clock: Clock
    switch_ssh_config: str | None = None  # cluster.yaml's ssh_config, for the switch's SSH too

    @abstractmethod
    def run(self, job: Job) -> RunResult: ...

    @abstractmethod
    def start(self, job: Job) -> Background: ...

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        """Run jobs concurrently (results in job order); per-node limits apply inside `run`."""
        if len(jobs) <= 1:
            return [self.run(j) for j in jobs]
        return self._in_pool(min(64, len(jobs)), lambda pool: list(pool.map(self.run, jobs)))

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        """`run_many(jobs)`, calling `tick()` every `every_s` seconds while they run (never
        before the first interval, never after they ended); sim and replay step their clock."""

        def ticking(pool: ThreadPoolExecutor) -> list[RunResult]:
            future = pool.submit(self.run_many, jobs)
            while wait([future], timeout=every_s).not_done:
                tick()
            return future.result()

        return self._in_pool(1, ticking)

    def _in_pool(
        self, workers: int, use: Callable[[ThreadPoolExecutor], list[RunResult]]
    ) -> list[RunResult]:
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            return use(pool)
        except BaseException as exc:
            pool.shutdown(wait=False, cancel_futures=True)
            if not isinstance(exc, Exception):
                # Ctrl-C: do not wait for the jobs' deadlines; end what runs on the nodes.
                self.close()
            raise
        finally:
            pool.shutdown(wait=False)

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        """The switch's console over SSH, unless the transport has a switch of its own (sim,
        replay) or wraps the calls (recording). `base_dir`: the cluster file's folder."""
        from pytest_sparkfabric.transport.switch_ssh import ssh_console

        return ssh_console(spec, base_dir, self.switch_ssh_config)

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        """The switch's REST client, likewise."""
        from pytest_sparkfabric.transport.rest import rest_client

        return rest_client(spec, base_dir)

    def close(self) -> None:  # noqa: B027 - transports without connections need no cleanup
        """End every background process and connection this transport opened."""
