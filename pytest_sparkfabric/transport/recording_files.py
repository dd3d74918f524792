"""The files of a recording: written private (0600 in 0700 folders), read back checked.

A recording folder holds one JSON-lines file per node (`spark-1.jsonl`) and the switch's calls
(`switch/rest.jsonl`). Users attach recordings to bug reports and edit them by hand, so every
line is checked before a replay starts: a damaged one is named by file and line, with the fix,
instead of ending the run in a traceback halfway.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

SWITCH_RECORDING = "switch/rest.jsonl"
"""Where a recording keeps the switch's REST calls, relative to its folder."""
SWITCH_SSH_RECORDING = "switch/ssh.jsonl"
"""Where a recording keeps the switch's console commands (switch.api ssh), each with its text."""

_FIX = "record again with --sparkfabric-record DIR, or repair or delete that line"


class RecordingError(Exception):
    """A recording file that cannot be replayed; str() says where, what, and the fix."""

    def __init__(self, path: Path, line: int | None, what: str) -> None:
        super().__init__(path, line, what)
        self.path, self.line, self.what = path, line, what

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.what}.\n    Fix: {_FIX}"


# -- writing ---------------------------------------------------------------------------------


def make_private_dir(directory: Path) -> None:
    """Create `directory` (and missing parents) 0700; an existing folder keeps its mode (it
    may be the user's own, shared one) and the files in it are private anyway."""
    missing = []
    d = directory
    while not d.exists() and d != d.parent:
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(d, 0o700)  # mkdir's mode is masked by umask; 0700 needs no group bits anyway


def append_line(path: Path, record: Mapping[str, Any]) -> None:
    """Append one record as a JSON line to a file only its owner can read."""
    make_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (json.dumps(record, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)


def holds_recording(directory: Path) -> bool:
    """Whether `directory` already holds a recording (a node's or the switch's)."""
    if not directory.is_dir():
        return False
    return any(directory.glob("*.jsonl")) or any((directory / "switch").glob("*.jsonl"))


# -- reading ---------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "true/false", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)  # fmt: skip


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_seconds(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v) and v >= 0


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _opt(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


Field = tuple[str, Callable[[Any], bool], str, bool]
"""name, check, what it must be, required"""

NODE_FIELDS: tuple[Field, ...] = (
    ("command", _is_str, "a string", True),
    ("rc", _is_int, "an integer", True),
    ("stdout", _is_str, "a string", True),
    ("stderr", _is_str, "a string", True),
    ("duration_s", _is_seconds, "a number of seconds >= 0", True),
    ("timed_out", _is_bool, "true or false", False),
    ("sudo", _is_bool, "true or false", False),
    ("timeout_s", _is_seconds, "a number of seconds >= 0", False),
    ("transport_error", _opt(_is_str), "a string or null", False),
    ("polls_running", _opt(lambda v: _is_int(v) and v >= 0), "a count >= 0 or null", False),
)

SWITCH_FIELDS: tuple[Field, ...] = (
    ("key", _is_str, "a string", True),
    ("error", _is_str, "a string", False),
    ("unreachable", _is_bool, "true or false", False),
)


SWITCH_SSH_FIELDS: tuple[Field, ...] = (
    ("key", _is_str, "a string (the command)", True),
    ("reply", _is_str, "a string", False),
    ("error", _is_str, "a string", False),
    ("unreachable", _is_bool, "true or false", False),
)


def _check_fields(record: Any, fields: tuple[Field, ...]) -> str | None:
    if not isinstance(record, dict):
        return f"{_kind(record)}, not a JSON object"
    for name, check, must, required in fields:
        if name not in record:
            if required:
                return f"no {name!r} field"
            continue
        if not check(record[name]):
            return f"{name!r} is {_kind(record[name])} ({_short(record[name])}), expected {must}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:36] + " ..."


def _open_regular(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise RecordingError(path, None, f"cannot be read ({err.strerror or err})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "something else"
        raise RecordingError(path, None, f"{kind}, not a recording file")
    return fd


def read_records(path: Path, fields: tuple[Field, ...]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every non-blank line; RecordingError at the first bad one."""
    with os.fdopen(_open_regular(path), "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise RecordingError(
                    path, number, f"not UTF-8 text (byte 0x{raw[err.start]:02x} at column "
                    f"{err.start + 1})"
                ) from None  # fmt: skip
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError as err:
                cut = "" if text.endswith("\n") else "; the line is cut short (an unfinished run?)"
                what = getattr(err, "msg", str(err))
                col = getattr(err, "colno", None)
                at = f" at column {col}" if col else ""
                raise RecordingError(path, number, f"not valid JSON ({what}{at}){cut}") from None
            problem = _check_fields(record, fields)
            if problem:
                raise RecordingError(path, number, problem)
            yield number, record


def node_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jsonl"))


def check_recording(directory: Path) -> None:
    """Read every file of a recording folder through; RecordingError names the first bad line."""
    for path in node_files(directory):
        for _ in read_records(path, NODE_FIELDS):
            pass
    for name, fields in (
        (SWITCH_RECORDING, SWITCH_FIELDS),
        (SWITCH_SSH_RECORDING, SWITCH_SSH_FIELDS),
    ):
        switch = directory / name
        if switch.exists() or switch.is_symlink():
            for _ in read_records(switch, fields):
                pass
