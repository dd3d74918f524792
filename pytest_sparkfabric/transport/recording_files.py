"""The files of a recording: one format, one writer, one reader.

A recording folder holds one JSON-lines file per node (`spark-1.jsonl`: a `NodeRecord` a line)
and the switch's calls (`switch/rest.jsonl`, `switch/ssh.jsonl`: a `SwitchRecord` a line). It is
written private (0600 files in 0700 folders: it holds everything the nodes answered), never
through a symbolic link, and a write that fails (a full disk) stops the recording with its lines
whole, said once. Users attach recordings to bug reports and edit them by hand, so every line is
checked before a replay starts: a damaged one is named by file and line, with the fix.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from pytest_sparkfabric.private_files import DIR_MODE, make_private_dir

SWITCH_RECORDING = "switch/rest.jsonl"
"""Where a recording keeps the switch's REST calls, relative to its folder."""
SWITCH_SSH_RECORDING = "switch/ssh.jsonl"
"""Where a recording keeps the switch's console commands (switch.api ssh), each with its text."""

_FIX = "record again with --sparkfabric-record DIR, or repair or delete that line"


class _Line(BaseModel):
    # strict: a hand-edited "rc": "0" is a damaged line, not a 0; unknown fields are ignored.
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


class NodeRecord(_Line):
    """One finished command on one node."""

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


class SwitchRecord(_Line):
    """One switch call (key: method, path and body as JSON; or the console command) and its
    reply or its error."""

    key: str
    reply: JsonValue = None
    error: str | None = None
    unreachable: bool = False


class ConsoleRecord(SwitchRecord):
    reply: str | None = None
    """RouterOS's text answer to the command."""


Record = TypeVar("Record", bound=_Line)


class RecordingError(Exception):
    """A recording file that cannot be replayed; str() says where, what, and the fix."""

    def __init__(self, path: Path, line: int | None, what: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {what}.\n    Fix: {_FIX}")


# -- writing ---------------------------------------------------------------------------------


class Writer:
    """Appends records to a recording folder from many threads, one whole JSON line each."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        make_private_dir(directory)
        self._lock = threading.Lock()
        self.failed: str | None = None
        """Why the recording stopped (said once, as a RuntimeWarning), or None."""

    def append(self, name: str, record: _Line) -> None:
        data = (record.model_dump_json(exclude_defaults=True) + "\n").encode()
        with self._lock:
            if self.failed is not None:
                return
            try:
                _append(self.directory, name, data)
            except OSError as err:
                self.failed = (
                    f"sparkfabric: recording stopped: {self.directory / name}: "
                    f"{err.strerror or err}; its lines so far are whole and replay, nothing "
                    "later was recorded. Fix: record into a new folder on a disk with room "
                    "(--sparkfabric-record DIR)"
                )
                warnings.warn(self.failed, RuntimeWarning, stacklevel=2)


def _append(directory: Path, name: str, data: bytes) -> None:
    """`data` at the end of directory/name (0600), never through a symbolic link, never half."""
    *folders, file = name.split("/")
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for folder in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, DIR_MODE, dir_fd=fd)
            sub = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = sub
            os.fchmod(fd, DIR_MODE)  # mkdir's mode passes through the umask
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
        out = os.open(file, flags, 0o600, dir_fd=fd)
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
    if not directory.is_dir():
        return False
    return any(directory.glob("*.jsonl")) or any((directory / "switch").glob("*.jsonl"))


# -- reading ---------------------------------------------------------------------------------


def _what(err: ValidationError, raw: bytes) -> str:
    first = err.errors(include_url=False)[0]
    field = ".".join(map(str, first["loc"]))
    if first["type"] == "json_invalid":
        cut = "" if raw.endswith(b"\n") else "; the line is cut short (an unfinished run?)"
        error = str(first["ctx"]["error"]).replace(" at line 1 column ", " at column ")
        return f"not valid JSON ({error}){cut}"
    if first["type"] == "model_type":
        return f"not a JSON object ({type(first['input']).__name__})"
    if first["type"] == "missing":
        return f"no {field!r} field"
    shown = repr(first["input"])
    return f"{field!r}: {first['msg'].lower()} (got {shown[:36]})"


def _open_regular(path: Path) -> int:
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
    return fd


def read_records(path: Path, model: type[Record]) -> Iterator[Record]:
    """Every non-blank line's record; RecordingError at the first bad one."""
    with os.fdopen(_open_regular(path), "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                if raw.strip():
                    yield model.model_validate_json(raw)
            except ValidationError as err:
                raise RecordingError(path, number, _what(err, raw)) from None


def read_recording(directory: Path) -> Iterator[tuple[str, str, NodeRecord | SwitchRecord]]:
    """(file name in the folder, key, record) of every line of a recording, a node's keyed by
    its command; RecordingError names the first bad line."""
    for path in sorted(directory.glob("*.jsonl")):
        for rec in read_records(path, NodeRecord):
            yield path.name, rec.command, rec
    for name, model in ((SWITCH_RECORDING, SwitchRecord), (SWITCH_SSH_RECORDING, ConsoleRecord)):
        if (directory / name).exists() or (directory / name).is_symlink():
            for switch_rec in read_records(directory / name, model):
                yield name, switch_rec.key, switch_rec


def check_recording(directory: Path) -> None:
    """Read every file of a recording folder through; RecordingError names the first bad line."""
    for _ in read_recording(directory):
        pass
