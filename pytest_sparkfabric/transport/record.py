"""Record every command a session ran and every call it made to the switch, and replay a
session from such a recording.

A recording is a folder with one JSON-lines file per node (each line one command with its rc,
stdout, stderr and duration) and `switch/rest.jsonl` (each line one call with its reply or
error); see `recording_files` for how they are written and checked. Users attach recordings to
bug reports; we use them as golden runs. Nodes and switch share one writer and one way of
answering: by key (node and command; method, path and body), in recorded order.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

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
    NODE_FIELDS,
    SWITCH_FIELDS,
    SWITCH_RECORDING,
    SWITCH_SSH_FIELDS,
    SWITCH_SSH_RECORDING,
    Field,
    append_line,
    make_private_dir,
    node_files,
    read_records,
)
from pytest_sparkfabric.transport.switch import (
    SwitchClient,
    SwitchConsole,
    SwitchError,
    SwitchUnreachable,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.spec import SwitchSpec

K = TypeVar("K")


class _Folder:
    """A recording folder that many threads append records to, one JSON line each."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        make_private_dir(directory)
        self._lock = threading.Lock()

    def append(self, name: str, record: Mapping[str, Any]) -> None:
        with self._lock:
            append_line(self.directory / name, record)


class _Answers(Generic[K]):
    """Recorded answers by key, each key's in recorded order. Once a key's answers run out the
    last one repeats (a soak sampled a little longer than when it was recorded)."""

    def __init__(self) -> None:
        self._queues: dict[K, deque[dict[str, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()

    def add(self, key: K, record: dict[str, Any]) -> None:
        self._queues[key].append(record)

    def take(self, key: K) -> dict[str, Any] | None:
        with self._lock:
            queue = self._queues.get(key)
            if not queue:
                return None
            return queue.popleft() if len(queue) > 1 else queue[0]


def _record(job: Job, r: RunResult, cap_bytes: int) -> dict[str, Any]:
    return {
        "command": job.command,
        "sudo": job.sudo,
        "timeout_s": job.timeout_s,
        "rc": r.rc,
        "stdout": cap_text(r.stdout, cap_bytes),
        "stderr": cap_text(r.stderr, cap_bytes),
        "duration_s": round(r.duration_s, 3),
        "timed_out": r.timed_out,
        "transport_error": r.transport_error,
    }


class _RecordedBackground:
    def __init__(self, rec: RecordingTransport, inner: Background) -> None:
        self.job = inner.job
        self._rec = rec
        self._inner = inner
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
    """Wraps any transport and appends each finished command to DIR/<node>.jsonl."""

    def __init__(
        self, inner: Transport, directory: Path, *, output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES
    ) -> None:
        self.inner = inner
        self.clock = inner.clock
        self.directory = directory
        self.output_cap_bytes = output_cap_bytes
        self._folder = _Folder(directory)

    def write(self, job: Job, r: RunResult, *, polls_running: int | None = None) -> None:
        record = _record(job, r, self.output_cap_bytes)
        if polls_running is not None:
            record["polls_running"] = polls_running
        self._folder.append(f"{job.node}.jsonl", record)

    def run(self, job: Job) -> RunResult:
        r = self.inner.run(job)
        self.write(job, r)
        return r

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        results = self.inner.run_many(jobs)
        for job, r in zip(jobs, results, strict=True):
            self.write(job, r)
        return results

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        results = self.inner.run_many_ticking(jobs, every_s, tick)
        for job, r in zip(jobs, results, strict=True):
            self.write(job, r)
        return results

    def start(self, job: Job) -> Background:
        return _RecordedBackground(self, self.inner.start(job))

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        inner = self.inner.switch_client(spec, base_dir)
        return RecordingClient(inner, lambda rec: self._folder.append(SWITCH_RECORDING, rec))

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        inner = self.inner.switch_console(spec, base_dir)
        return RecordingConsole(inner, lambda rec: self._folder.append(SWITCH_SSH_RECORDING, rec))

    def close(self) -> None:
        self.inner.close()


class _ReplayBackground:
    def __init__(self, result: RunResult, polls_running: int | None) -> None:
        self.job = Job(result.node, result.command, 1)
        self._result = result
        self._polls_left = polls_running

    def done(self) -> bool:
        # Recorded as never seen ending on its own: it runs until stopped.
        if self._polls_left is None:
            return False
        if self._polls_left > 0:
            self._polls_left -= 1
            return False
        return True

    def wait(self) -> RunResult:
        return self._result

    def stop(self) -> RunResult:
        return self._result


class ReplayTransport(Transport):
    """Answers commands from a recording, matched by node and exact command text.

    A command recorded several times is answered in recorded order; once the recording runs out
    the last answer repeats (a soak sampled a little longer than when it was recorded). A
    damaged file raises RecordingError (file, line, fix) here, before anything is answered.
    """

    clock: VirtualClock

    def __init__(self, directory: Path) -> None:
        self.clock = VirtualClock()
        self.directory = directory
        self._answers: _Answers[tuple[str, str]] = _Answers()
        if not directory.is_dir():
            raise FileNotFoundError(f"replay_dir {directory} does not exist")
        for path in node_files(directory):
            for _, rec in read_records(path, NODE_FIELDS):
                self._answers.add((path.stem, rec["command"]), rec)

    def _take(self, job: Job) -> dict[str, Any] | RunResult:
        rec = self._answers.take((job.node, job.command))
        if rec is None:
            return RunResult(
                job.node, job.command, 255, "", "", 0.0,
                transport_error=(
                    f"{job.node}: replay: no recording of `{job.command}` in "
                    f"{self.directory / (job.node + '.jsonl')}"
                ),
            )  # fmt: skip
        return rec

    def _result(self, job: Job, rec: dict[str, Any]) -> RunResult:
        return RunResult(
            job.node,
            job.command,
            rec["rc"],
            rec["stdout"],
            rec["stderr"],
            float(rec["duration_s"]),
            bool(rec.get("timed_out", False)),
            rec.get("transport_error"),
            self.clock.now(),
        )

    def _answer(self, job: Job) -> RunResult:
        rec = self._take(job)
        return rec if isinstance(rec, RunResult) else self._result(job, rec)

    def run(self, job: Job) -> RunResult:
        r = self._answer(job)
        self.clock.sleep(r.duration_s)
        return r

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        results = [self._answer(j) for j in jobs]
        self.clock.sleep(max((r.duration_s for r in results), default=0.0))
        return results

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        results = [self._answer(j) for j in jobs]
        end = self.clock.now() + max((r.duration_s for r in results), default=0.0)
        step_through(self.clock, end, every_s, tick)
        return results

    def start(self, job: Job) -> Background:
        rec = self._take(job)
        if isinstance(rec, RunResult):
            return _ReplayBackground(rec, 0)  # a miss: nothing runs, it ended at once
        return _ReplayBackground(self._result(job, rec), rec.get("polls_running"))

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        return ReplayClient(self.directory / SWITCH_RECORDING)

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        return ReplayConsole(self.directory / SWITCH_SSH_RECORDING)


# -- the switch ---------------------------------------------------------------------------------


def _key(method: str, path: str, body: Mapping[str, str] | None) -> str:
    return json.dumps([method, path, dict(body) if body is not None else None], sort_keys=True)


def _kept(key: str, call: Callable[[], Any], keep: Callable[[dict[str, Any]], None]) -> Any:
    """`call()`'s reply (or its SwitchError, raised again), handed to `keep` under `key`."""
    rec: dict[str, Any] = {"key": key}
    try:
        rec["reply"] = call()
        return rec["reply"]
    except SwitchError as exc:
        rec["error"] = str(exc)
        rec["unreachable"] = isinstance(exc, SwitchUnreachable)
        raise
    finally:
        keep(rec)


def _loaded(path: Path, fields: tuple[Field, ...]) -> _Answers[str]:
    answers: _Answers[str] = _Answers()
    if path.is_file():
        for _, rec in read_records(path, fields):
            answers.add(rec["key"], rec)
    return answers


def _replayed(answers: _Answers[str], key: str, missing: str) -> Any:
    """The recorded reply to `key` (its error raised again); `missing`: the line when none."""
    rec = answers.take(key)
    if rec is None:
        raise SwitchUnreachable(missing)
    if "error" in rec:
        cls = SwitchUnreachable if rec.get("unreachable") else SwitchError
        raise cls(str(rec["error"]))
    return rec.get("reply")


class RecordingClient:
    """Wraps a switch client and hands every call and its reply (or error) to `keep`."""

    def __init__(self, inner: SwitchClient, keep: Callable[[dict[str, Any]], None]) -> None:
        self.inner = inner
        self._keep = keep

    def get(self, path: str) -> Any:
        return _kept(_key("GET", path, None), lambda: self.inner.get(path), self._keep)

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return _kept(_key("POST", path, body), lambda: self.inner.post(path, body), self._keep)


class ReplayClient:
    """Answers switch calls from a recording file, in recorded order (the last answer repeats);
    a call never recorded is unreachable, with the file named."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._answers = _loaded(path, SWITCH_FIELDS)

    def get(self, path: str) -> Any:
        return self._answer("GET", path, None)

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._answer("POST", path, body)

    def _answer(self, method: str, path: str, body: Mapping[str, str] | None) -> Any:
        missing = f"replay: no recording of {method} {path} in {self.path}"
        return _replayed(self._answers, _key(method, path, body), missing)


class RecordingConsole:
    """Wraps a switch console and hands every command and its text (or error) to `keep`."""

    def __init__(self, inner: SwitchConsole, keep: Callable[[dict[str, Any]], None]) -> None:
        self.inner = inner
        self._keep = keep

    def run(self, command: str) -> str:
        return str(_kept(command, lambda: self.inner.run(command), self._keep))


class ReplayConsole:
    """Answers console commands from a recording file, in recorded order (the last answer
    repeats); a command never recorded is unreachable, with the file named."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._answers = _loaded(path, SWITCH_SSH_FIELDS)

    def run(self, command: str) -> str:
        missing = f"replay: no recording of `{command}` in {self.path}"
        return str(_replayed(self._answers, command, missing) or "")
