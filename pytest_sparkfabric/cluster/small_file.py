"""Reading a file a user named (the cluster file): only a small regular file is read.

A FIFO would block the run forever, a device (`/dev/zero`) would be read without end; both are
refused by what `stat` says before any byte is read, and so is a file too large to be a cluster
description.
"""

from __future__ import annotations

import os
import stat

MAX_CLUSTER_BYTES = 2**20


class NotASmallFile(Exception):
    """The path names something that is not a small regular file; str() says what it is."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what, self.fix = what, fix


def _kind(mode: int) -> str | None:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), None)


def _mib(n: int) -> str:
    return f"{n} bytes ({n / 2**20:g} MiB)"


def _check(st: os.stat_result, limit_bytes: int) -> None:
    kind = _kind(st.st_mode)
    if kind == "a directory":
        raise NotASmallFile("the path is a directory, not a file", "name the file")
    if kind is not None or not stat.S_ISREG(st.st_mode):
        raise NotASmallFile(
            f"the path is {kind or 'something else'}, not a regular file",
            "name a cluster.yaml file",
        )
    if st.st_size > limit_bytes:
        raise NotASmallFile(
            f"the file is {st.st_size} bytes; a cluster file is at most {_mib(limit_bytes)}",
            "name the cluster.yaml file (is this the right path?)",
        )


def read_small_text(path: str | os.PathLike[str], limit_bytes: int = MAX_CLUSTER_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `limit_bytes`.

    Raises NotASmallFile, FileNotFoundError, UnicodeDecodeError or another OSError."""
    _check(os.stat(path), limit_bytes)
    # O_NONBLOCK: had it become a FIFO since the stat above, opening it still returns at once.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _check(os.fstat(fd), limit_bytes)
        chunks: list[bytes] = []
        size = 0
        while size <= limit_bytes:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit_bytes:
        raise NotASmallFile(
            f"the file is larger than a cluster file's {_mib(limit_bytes)} at most",
            "name the cluster.yaml file (is this the right path?)",
        )
    return b"".join(chunks).decode("utf-8")
