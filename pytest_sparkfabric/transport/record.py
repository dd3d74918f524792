"""Record every command a session ran and every call it made to the switch, and replay a
session from such a recording (`recording_files` holds the format, its writer and reader).

Users attach recordings to bug reports; we use them as golden runs. Nodes and switch are
answered the same way: by file and key (a node's command; a switch call's method, path and body,
or its console command), in recorded order, and once a key's answers run out the last one
repeats (a soak sampled a little longer than when it was recorded).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_sparkfabric.transport.base import (
    DEFAULT_OUTPUT_CAP_BYTES,
    Background,
    Job,
    RunResult,
    Tick,
    Transport,
    VirtualClock,
    cap_text,
    step_through,
)
from pytest_sparkfabric.transport.recording_files import (
    SWITCH_RECORDING,
    SWITCH_SSH_RECORDING,
    NodeRecord,
    SwitchRecord,
    Writer,
    read_recording,
)
from pytest_sparkfabric.transport.rest import (
    SwitchClient,
    SwitchConsole,
    SwitchError,
    SwitchUnreachable,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.spec import SwitchSpec


class _SwitchCalls:
    """A switch client and console in one: each call is a key, what it is in words, and the
    call itself on the switch behind."""

    def get(self, path: str) -> Any:
        return self._call(json.dumps(["GET", path, None]), f"GET {path}", lambda s: s.get(path))

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        key = json.dumps(["POST", path, dict(body)], sort_keys=True)
        return self._call(key, f"POST {path}", lambda s: s.post(path, body))

    def run(self, command: str) -> str:
        return str(self._call(command, f"`{command}`", lambda s: s.run(command)) or "")

    def _call(self, key: str, what: str, call: Callable[[Any], Any]) -> Any:
        raise NotImplementedError


class _RecordedSwitch(_SwitchCalls):
    def __init__(self, inner: Any, writer: Writer, name: str) -> None:
        self.inner, self._writer, self._name = inner, writer, name

    def _call(self, key: str, what: str, call: Callable[[Any], Any]) -> Any:
        try:
            reply = call(self.inner)
        except SwitchError as exc:
            unreachable = isinstance(exc, SwitchUnreachable)
            self._writer.append(
                self._name, SwitchRecord(key=key, error=str(exc), unreachable=unreachable)
            )
            raise
        self._writer.append(self._name, SwitchRecord(key=key, reply=reply))
        return reply


class _RecordedBackground:
    def __init__(self, rec: RecordingTransport, inner: Background) -> None:
        self.job, self._rec, self._inner = inner.job, rec, inner
        self._written = False
        self._polls_running = 0
        self._ended_after: int | None = None

    def done(self) -> bool:
        # How many times it was still running when asked: a replay answers the same way.
        ended = self._inner.done()
        if self._ended_after is None and ended:
            self._ended_after = self._polls_running
        self._polls_running += not ended
        return ended

    def wait(self) -> RunResult:
        return self._keep(self._inner.wait())

    def stop(self) -> RunResult:
        return self._keep(self._inner.stop())

    def _keep(self, r: RunResult) -> RunResult:
        if not self._written:
            self._written = True
            self._rec.write(self.job, r, polls_running=self._ended_after)
        return r


class RecordingTransport(Transport):
    """Wraps any transport and appends each finished command to DIR/<node>.jsonl, each switch
    call to DIR/switch/rest.jsonl or ssh.jsonl."""

    def __init__(
        self, inner: Transport, directory: Path, *, output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES
    ) -> None:
        self.inner, self.clock, self.directory = inner, inner.clock, directory
        self.output_cap_bytes = output_cap_bytes
        self.writer = Writer(directory)

    def write(self, job: Job, r: RunResult, *, polls_running: int | None = None) -> None:
        cap = self.output_cap_bytes
        record = NodeRecord(
            command=job.command, rc=r.rc, stdout=cap_text(r.stdout, cap),
            stderr=cap_text(r.stderr, cap), duration_s=round(r.duration_s, 3),
            timed_out=r.timed_out, sudo=job.sudo, timeout_s=job.timeout_s,
            transport_error=r.transport_error, polls_running=polls_running,
        )  # fmt: skip
        self.writer.append(f"{job.node}.jsonl", record)

    def run(self, job: Job) -> RunResult:
        return self._written([job], [self.inner.run(job)])[0]

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        return self._written(jobs, self.inner.run_many(jobs))

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        return self._written(jobs, self.inner.run_many_ticking(jobs, every_s, tick))

    def _written(self, jobs: Sequence[Job], results: list[RunResult]) -> list[RunResult]:
        for job, r in zip(jobs, results, strict=True):
            self.write(job, r)
        return results

    def start(self, job: Job) -> Background:
        return _RecordedBackground(self, self.inner.start(job))

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        inner = self.inner.switch_client(spec, base_dir)
        return _RecordedSwitch(inner, self.writer, SWITCH_RECORDING)

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        inner = self.inner.switch_console(spec, base_dir)
        return _RecordedSwitch(inner, self.writer, SWITCH_SSH_RECORDING)

    def close(self) -> None:
        self.inner.close()


class _ReplayedSwitch(_SwitchCalls):
    """A call never recorded is unreachable, with the file named."""

    def __init__(self, replay: ReplayTransport, name: str) -> None:
        self._replay, self._name = replay, name

    def _call(self, key: str, what: str, call: Callable[[Any], Any]) -> Any:
        rec = self._replay.take(self._name, key)
        if not isinstance(rec, SwitchRecord):
            where = self._replay.directory / self._name
            raise SwitchUnreachable(f"replay: no recording of {what} in {where}")
        if rec.error is not None:
            raise (SwitchUnreachable if rec.unreachable else SwitchError)(rec.error)
        return rec.reply


class _ReplayBackground:
    def __init__(self, result: RunResult, polls_running: int | None) -> None:
        self.job = Job(result.node, result.command, 1)
        self._result, self._polls_left = result, polls_running

    def done(self) -> bool:
        if self._polls_left is None:  # never seen ending on its own: it runs until stopped
            return False
        self._polls_left -= 1
        return self._polls_left < 0

    def wait(self) -> RunResult:
        return self._result

    stop = wait


class ReplayTransport(Transport):
    """Answers commands from a recording, matched by node and exact command text. A damaged file
    raises RecordingError (file, line, fix) here, before anything is answered."""

    clock: VirtualClock

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"replay_dir {directory} does not exist")
        self.clock, self.directory = VirtualClock(), directory
        self._answers: dict[tuple[str, str], deque[Any]] = defaultdict(deque)
        for name, key, record in read_recording(directory):
            self._answers[name, key].append(record)
        self._lock = threading.Lock()

    def take(self, name: str, key: str) -> Any:
        """The next recorded answer of `key` in file `name` (the last repeats), or None."""
        with self._lock:
            queue = self._answers.get((name, key))
            return (queue.popleft() if len(queue) > 1 else queue[0]) if queue else None

    def _answer(self, job: Job) -> tuple[RunResult, int | None]:
        rec = self.take(f"{job.node}.jsonl", job.command)
        if not isinstance(rec, NodeRecord):
            miss = f"{job.node}: replay: no recording of `{job.command}` in "
            miss += str(self.directory / f"{job.node}.jsonl")
            return RunResult(job.node, job.command, 255, "", "", 0.0, transport_error=miss), 0
        result = RunResult(
            job.node, job.command, rec.rc, rec.stdout, rec.stderr, rec.duration_s,
            rec.timed_out, rec.transport_error, self.clock.now(),
        )  # fmt: skip
        return result, rec.polls_running

    def run(self, job: Job) -> RunResult:
        return self.run_many([job])[0]

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        return self.run_many_ticking(jobs, float("inf"), lambda: None)

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        results = [self._answer(j)[0] for j in jobs]
        end = self.clock.now() + max((r.duration_s for r in results), default=0.0)
        step_through(self.clock, end, every_s, tick)
        return results

    def start(self, job: Job) -> Background:
        return _ReplayBackground(*self._answer(job))

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        return _ReplayedSwitch(self, SWITCH_RECORDING)

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        return _ReplayedSwitch(self, SWITCH_SSH_RECORDING)
