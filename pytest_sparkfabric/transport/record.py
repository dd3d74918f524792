"""Record every command and switch call of a session (`spark-1.jsonl`, `switch/rest.jsonl`,
`switch/ssh.jsonl`: one record a line, private, whole lines); replay them by file and key in
recorded order, the last answer repeating. A recording is read and checked whole, once, before
a replay starts (`Recording`)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import warnings
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from pytest_sparkfabric.private_files import DIR_MODE, make_private_dir
from pytest_sparkfabric.transport.base import (
    Background,
    Finished,
    Job,
    RunResult,
    Tick,
    Transport,
    VirtualClock,
    not_run,
    step_through,
)
from pytest_sparkfabric.transport.process import DEFAULT_OUTPUT_CAP_BYTES, cap_text
from pytest_sparkfabric.transport.rest import (
    SwitchClient,
    SwitchConsole,
    SwitchError,
    SwitchUnreachable,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.spec import SwitchSpec

SWITCH_RECORDING = "switch/rest.jsonl"
SWITCH_SSH_RECORDING = "switch/ssh.jsonl"
_FIX = "record again with --sparkfabric-record DIR, or repair or delete that line"


class _Line(BaseModel):
    # strict: a hand-edited "rc": "0" is a damaged line, not a 0; unknown fields are ignored.
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


class NodeRecord(_Line):
    command: str
    rc: int
    stdout: str
    stderr: str
    duration_s: float = Field(ge=0, allow_inf_nan=False)
    timed_out: bool = False
    sudo: bool = False
    timeout_s: float | None = Field(None, ge=0, allow_inf_nan=False)
    transport_error: str | None = None
    polls_running: int | None = Field(None, ge=0)
    """Background jobs: how often it was still running when asked (None: until stopped)."""

    @property
    def key(self) -> str:
        return self.command


class SwitchRecord(_Line):
    """One switch call (key: method, path and body as JSON; or the console command)."""

    key: str
    reply: JsonValue = None
    error: str | None = None
    unreachable: bool = False


class ConsoleRecord(SwitchRecord):
    reply: str | None = None  # RouterOS's text answer


_SWITCH_FILES = ((SWITCH_RECORDING, SwitchRecord), (SWITCH_SSH_RECORDING, ConsoleRecord))


class RecordingError(Exception):
    """A recording file that cannot be replayed; str() says where, what, and the fix."""

    def __init__(self, path: Path, line: int | None, what: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {what}.\n    Fix: {_FIX}")


def _append(directory: Path, name: str, data: bytes) -> None:
    """`data` at the end of directory/name (0600), never through a symbolic link, never half."""
    folder, _, file = name.rpartition("/")
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if folder:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, DIR_MODE, dir_fd=fd)
            sub = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = sub
            os.fchmod(fd, DIR_MODE)  # mkdir's mode passes through the umask
        out = os.open(
            file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=fd
        )
    finally:
        os.close(fd)
    try:
        os.fchmod(out, 0o600)
        start = os.fstat(out).st_size
        try:
            if os.write(out, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # a short write
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(out, start)
            raise
    finally:
        os.close(out)


def holds_recording(directory: Path) -> bool:
    """Whether `directory` already holds a recording (a node's or the switch's)."""
    return directory.is_dir() and any(
        any(d.glob("*.jsonl")) for d in (directory, directory / "switch")
    )


def _what(err: ValidationError, raw: bytes) -> str:
    first = err.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        cut = "" if raw.endswith(b"\n") else "; the line is cut short (an unfinished run?)"
        error = str(first["ctx"]["error"]).replace(" at line 1 column ", " at column ")
        return f"not valid JSON ({error}){cut}"
    if first["type"] == "model_type":
        return f"not a JSON object ({type(first['input']).__name__})"
    field = ".".join(map(str, first["loc"]))
    if first["type"] == "missing":
        return f"no {field!r} field"
    return f"{field!r}: {first['msg'].lower()} (got {repr(first['input'])[:36]})"


def _read(path: Path, model: type[_Line]) -> Iterator[Any]:
    """Every non-blank line's record; RecordingError at the first bad one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as err:
        what = "a symbolic link, not followed" if err.errno == errno.ELOOP else err.strerror
        raise RecordingError(path, None, f"cannot be read ({what or err})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "something else"
        raise RecordingError(path, None, f"{kind}, not a recording file")
    with os.fdopen(fd, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                if raw.strip():
                    yield model.model_validate_json(raw)
            except ValidationError as err:
                raise RecordingError(path, number, _what(err, raw)) from None


class Recording:
    """A recording folder, read and checked whole at once (RecordingError names the first bad
    line), then answered from by file and key in recorded order, the last answer repeating."""

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"replay_dir {directory} does not exist")
        self.directory = directory
        self._answers: defaultdict[tuple[str, str], deque[Any]] = defaultdict(deque)
        nodes = [(p.name, NodeRecord) for p in sorted(directory.glob("*.jsonl"))]
        # A switch file that is a link is named as one, not skipped.
        switch = [(n, m) for n, m in _SWITCH_FILES if os.path.lexists(directory / n)]
        for name, model in [*nodes, *switch]:
            for record in _read(directory / name, model):
                self._answers[name, record.key].append(record)
        self._lock = threading.Lock()

    def take(self, name: str, key: str) -> Any:
        """The next recorded answer of `key` in file `name` (the last repeats), or None."""
        with self._lock:
            queue = self._answers.get((name, key))
            return (queue.popleft() if len(queue) > 1 else queue[0]) if queue else None


class _Switch:
    """A switch client and console in one: each call goes to `answer` as its key, what it is in
    words, and the call itself on the switch behind (recorded, or answered from a recording)."""

    def __init__(self, answer: Callable[[str, str, Callable[[Any], Any]], Any]) -> None:
        self._answer = answer

    def get(self, path: str) -> Any:
        return self._answer(json.dumps(["GET", path, None]), f"GET {path}", lambda s: s.get(path))

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        key = json.dumps(["POST", path, dict(body)], sort_keys=True)
        return self._answer(key, f"POST {path}", lambda s: s.post(path, body))

    def run(self, command: str) -> str:
        return str(self._answer(command, f"`{command}`", lambda s: s.run(command)) or "")


class _RecordedBackground:
    def __init__(self, rec: RecordingTransport, inner: Background) -> None:
        self.job, self._rec, self._inner = inner.job, rec, inner
        self._running, self._ended, self._written = 0, False, False

    def done(self) -> bool:
        # How many times it was still running when asked: a replay answers the same way.
        ended = self._inner.done()
        self._running += not ended
        self._ended |= ended
        return ended

    def wait(self) -> RunResult:
        return self._keep(self._inner.wait())

    def stop(self) -> RunResult:
        return self._keep(self._inner.stop())

    def _keep(self, r: RunResult) -> RunResult:
        if not self._written:
            self._written = True
            self._rec.written([self.job], [r], self._running if self._ended else None)
        return r


class RecordingTransport(Transport):
    """Wraps any transport and appends each finished command to DIR/<node>.jsonl, each switch
    call to DIR/switch/rest.jsonl or ssh.jsonl."""

    def __init__(
        self, inner: Transport, directory: Path, *, output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES
    ) -> None:
        self.inner, self.clock, self.directory = inner, inner.clock, directory
        self.output_cap_bytes = output_cap_bytes
        make_private_dir(directory)
        self._lock = threading.Lock()
        self.failed: str | None = None  # why the recording stopped (warned once)

    def append(self, name: str, record: _Line) -> None:
        """`record` as one whole JSON line of file `name`, from any thread."""
        data = (record.model_dump_json(exclude_defaults=True) + "\n").encode()
        with self._lock:
            try:
                if self.failed is None:
                    _append(self.directory, name, data)
            except OSError as err:
                self.failed = (
                    f"sparkfabric: recording stopped: {self.directory / name}: "
                    f"{err.strerror or err}; its lines so far are whole and replay, nothing "
                    "later was recorded. Fix: record into a new folder on a disk with room "
                    "(--sparkfabric-record DIR)"
                )
                warnings.warn(self.failed, RuntimeWarning, stacklevel=2)

    def written(
        self, jobs: Sequence[Job], results: list[RunResult], polls_running: int | None = None
    ) -> list[RunResult]:
        cap = self.output_cap_bytes
        for job, r in zip(jobs, results, strict=True):
            record = NodeRecord(
                command=job.command, rc=r.rc, stdout=cap_text(r.stdout, cap),
                stderr=cap_text(r.stderr, cap), duration_s=round(r.duration_s, 3),
                timed_out=r.timed_out, sudo=job.sudo, timeout_s=job.timeout_s,
                transport_error=r.transport_error, polls_running=polls_running,
            )  # fmt: skip
            self.append(f"{job.node}.jsonl", record)
        return results

    def run(self, job: Job) -> RunResult:
        return self.written([job], [self.inner.run(job)])[0]

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        return self.written(jobs, self.inner.run_many(jobs))

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        return self.written(jobs, self.inner.run_many_ticking(jobs, every_s, tick))

    def start(self, job: Job) -> Background:
        return _RecordedBackground(self, self.inner.start(job))

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        inner = self.inner.switch_client(spec, base_dir)
        return _Switch(partial(self._switch_call, inner, SWITCH_RECORDING))

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        inner = self.inner.switch_console(spec, base_dir)
        return _Switch(partial(self._switch_call, inner, SWITCH_SSH_RECORDING))

    def _switch_call(
        self, inner: Any, name: str, key: str, _: str, call: Callable[..., Any]
    ) -> Any:
        try:
            reply = call(inner)
        except SwitchError as exc:
            unreachable = isinstance(exc, SwitchUnreachable)
            self.append(name, SwitchRecord(key=key, error=str(exc), unreachable=unreachable))
            raise
        self.append(name, SwitchRecord(key=key, reply=reply))
        return reply

    def close(self) -> None:
        self.inner.close()


class ReplayTransport(Transport):
    """Answers commands from a loaded recording, matched by node and exact command text."""

    clock: VirtualClock

    def __init__(self, recording: Recording) -> None:
        self.clock, self.recording, self.directory = VirtualClock(), recording, recording.directory

    def _answer(self, job: Job) -> tuple[RunResult, int | None]:
        rec = self.recording.take(f"{job.node}.jsonl", job.command)
        if not isinstance(rec, NodeRecord):
            miss = f"replay: no recording of `{job.command}` in {self.directory / job.node}.jsonl"
            return not_run(job, f"{job.node}: {miss}"), 0
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
        # A server never seen ending on its own (polls_running None) runs until stopped.
        return Finished(job, *self._answer(job))

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        return _Switch(partial(self._switch_call, SWITCH_RECORDING))

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        return _Switch(partial(self._switch_call, SWITCH_SSH_RECORDING))

    def _switch_call(self, name: str, key: str, what: str, call: object) -> Any:
        rec = self.recording.take(name, key)
        if not isinstance(rec, SwitchRecord):  # never recorded: unreachable, the file named
            raise SwitchUnreachable(f"replay: no recording of {what} in {self.directory / name}")
        if rec.error is not None:
            raise (SwitchUnreachable if rec.unreachable else SwitchError)(rec.error)
        return rec.reply
