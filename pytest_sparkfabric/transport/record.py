"""Record every command a session ran and every call it made to the switch, and replay a
session from such a recording (`recording_files` holds the format, its writer and reader).

Users attach recordings to bug reports; we use them as golden runs. Nodes and switch are
answered the same way: by key (node and command; method, path and body; console command), in
recorded order, and once a key's answers run out the last one repeats (a soak sampled a little
longer than when it was recorded).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic

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
    ConsoleRecord,
    NodeRecord,
    Record,
    SwitchRecord,
    Writer,
    node_files,
    read_records,
)
from pytest_sparkfabric.transport.rest import (
    SwitchClient,
    SwitchConsole,
    SwitchError,
    SwitchUnreachable,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.spec import SwitchSpec


def _rest_key(method: str, path: str, body: Mapping[str, str] | None) -> str:
    return json.dumps([method, path, dict(body) if body is not None else None], sort_keys=True)


class _RecordedSwitch:
    """A switch client or console whose every call and reply (or error) is written down."""

    def __init__(self, inner: Any, write: Callable[[SwitchRecord], None]) -> None:
        self.inner, self._write = inner, write

    def get(self, path: str) -> Any:
        return self._kept(_rest_key("GET", path, None), lambda: self.inner.get(path))

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._kept(_rest_key("POST", path, body), lambda: self.inner.post(path, body))

    def run(self, command: str) -> str:
        return str(self._kept(command, lambda: self.inner.run(command)))

    def _kept(self, key: str, call: Callable[[], Any]) -> Any:
        try:
            reply = call()
        except SwitchError as exc:
            unreachable = isinstance(exc, SwitchUnreachable)
            self._write(SwitchRecord(key=key, error=str(exc), unreachable=unreachable))
            raise
        self._write(SwitchRecord(key=key, reply=reply))
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
        if self._ended_after is None:
            if ended:
                self._ended_after = self._polls_running
            else:
                self._polls_running += 1
        return ended

    def _keep(self, r: RunResult) -> RunResult:
        if not self._written:
            self._written = True
            self._rec.write(self.job, r, polls_running=self._ended_after)
        return r

    def wait(self) -> RunResult:
        return self._keep(self._inner.wait())

    def stop(self) -> RunResult:
        return self._keep(self._inner.stop())


class RecordingTransport(Transport):
    """Wraps any transport and appends each finished command to DIR/<node>.jsonl, each switch
    call to DIR/switch/rest.jsonl or ssh.jsonl."""

    def __init__(
        self, inner: Transport, directory: Path, *, output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES
    ) -> None:
        self.inner = inner
        self.clock = inner.clock
        self.directory = directory
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
        return _RecordedSwitch(inner, lambda rec: self.writer.append(SWITCH_RECORDING, rec))

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        inner = self.inner.switch_console(spec, base_dir)
        return _RecordedSwitch(inner, lambda rec: self.writer.append(SWITCH_SSH_RECORDING, rec))

    def close(self) -> None:
        self.inner.close()


class _Answers(Generic[Record]):
    """Recorded answers by key, each key's in recorded order; the last one repeats."""

    def __init__(self) -> None:
        self._queues: dict[Any, deque[Record]] = defaultdict(deque)
        self._lock = threading.Lock()

    def add(self, key: Any, record: Record) -> None:
        self._queues[key].append(record)

    def take(self, key: Any) -> Record | None:
        with self._lock:
            queue = self._queues.get(key)
            if not queue:
                return None
            return queue.popleft() if len(queue) > 1 else queue[0]


class _ReplayedSwitch:
    """Answers switch calls (REST or console) from a recording file; a call never recorded is
    unreachable, with the file named."""

    def __init__(self, path: Path, model: type[SwitchRecord]) -> None:
        self.path = path
        self._answers: _Answers[SwitchRecord] = _Answers()
        if path.is_file():
            for _, rec in read_records(path, model):
                self._answers.add(rec.key, rec)

    def get(self, path: str) -> Any:
        return self._answer(_rest_key("GET", path, None), f"GET {path}")

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._answer(_rest_key("POST", path, body), f"POST {path}")

    def run(self, command: str) -> str:
        return str(self._answer(command, f"`{command}`") or "")

    def _answer(self, key: str, what: str) -> Any:
        rec = self._answers.take(key)
        if rec is None:
            raise SwitchUnreachable(f"replay: no recording of {what} in {self.path}")
        if rec.error is not None:
            raise (SwitchUnreachable if rec.unreachable else SwitchError)(rec.error)
        return rec.reply


class _ReplayBackground:
    def __init__(self, result: RunResult, polls_running: int | None) -> None:
        self.job = Job(result.node, result.command, 1)
        self._result = result
        self._polls_left = polls_running

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
        self.clock = VirtualClock()
        self.directory = directory
        self._answers: _Answers[NodeRecord] = _Answers()
        for path in node_files(directory):
            for _, rec in read_records(path, NodeRecord):
                self._answers.add((path.stem, rec.command), rec)
        self._rest = _ReplayedSwitch(directory / SWITCH_RECORDING, SwitchRecord)
        self._console = _ReplayedSwitch(directory / SWITCH_SSH_RECORDING, ConsoleRecord)

    def _answer(self, job: Job) -> tuple[RunResult, int | None]:
        rec = self._answers.take((job.node, job.command))
        if rec is None:
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
        return self._rest

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        return self._console
