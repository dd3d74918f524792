"""One local ssh client process (the nodes' and the switch console's) whose two streams are read
to the end in threads (a pipe nobody reads stalls it) and capped, head and tail kept."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from typing import IO

DEFAULT_OUTPUT_CAP_BYTES = 16 * 1024 * 1024
"""Most output kept per command and stream: a tool printing without end costs bounded memory."""


class CappedOutput:
    """One output stream as it arrives: its head (banners, a JSON start) and its tail (the
    summary) up to `cap_bytes` in all; what lies between is counted and shown as a marker."""

    def __init__(self, cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES) -> None:
        self.cap_bytes = max(2, cap_bytes)
        self._head, self._tail, self._total = bytearray(), bytearray(), 0
        self._keep = self.cap_bytes - self.cap_bytes // 2  # of the tail
        self._lock = threading.Lock()

    @property
    def dropped(self) -> int:
        return max(0, self._total - self.cap_bytes)

    def add(self, chunk: bytes) -> None:
        with self._lock:
            room = max(0, self.cap_bytes // 2 - len(self._head))
            self._head += chunk[:room]
            self._tail += chunk[room:]
            self._total += len(chunk)
            if len(self._tail) > 2 * self._keep:  # cut in halves: amortised, bounded memory
                del self._tail[: -self._keep]

    def text(self) -> str:
        with self._lock:
            head, tail = self._head.decode(errors="replace"), self._tail[-self._keep :]
            marker = (
                f"\n[sparkfabric: {self.dropped} bytes of output dropped here: only the first "
                f"and last {self.cap_bytes // 2} bytes of a stream are kept (output_cap_mib in "
                "cluster.yaml)]\n"
            )
            return head + (marker if self.dropped else "") + tail.decode(errors="replace")


def cap_text(text: str, cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES) -> str:
    """`text` cut as CappedOutput would (a text already cut, its marker included, stays)."""
    data = text.encode(errors="replace")
    if len(data) <= cap_bytes + 256:
        return text
    out = CappedOutput(cap_bytes)
    out.add(data)
    return out.text()


class Proc:
    """One ssh client process, both streams drained in threads and capped: megabytes never
    block it. With `hold_stdin`, its stdin is a pipe nothing is written to: closing it (or this
    process ending) tells the node's supervisor to end the command."""

    def __init__(
        self,
        argv: list[str],
        *,
        cap_bytes: int,
        hold_stdin: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.started = time.monotonic()
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if hold_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self.out, self.err = CappedOutput(cap_bytes), CappedOutput(cap_bytes)
        streams = ((self.popen.stdout, self.out), (self.popen.stderr, self.err))
        self._threads = [threading.Thread(target=_drain, args=s, daemon=True) for s in streams]
        for t in self._threads:
            t.start()

    def done(self) -> bool:
        return self.popen.poll() is not None

    def end_stdin(self) -> None:
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()

    def wait(self, timeout: float, drain_s: float = 5.0) -> bool:
        """Whether ssh exited within `timeout`; its output is then read for at most `drain_s`
        more (a child of ssh may hold the pipes open: `drained`)."""
        try:
            self.popen.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return False
        stop = time.monotonic() + drain_s
        for t in self._threads:
            t.join(timeout=max(0.0, stop - time.monotonic()))
        return True

    def drained(self) -> bool:
        return not any(t.is_alive() for t in self._threads)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        for t in self._threads:
            t.join(timeout=5)
        self.end_stdin()


def _drain(stream: IO[bytes], sink: CappedOutput) -> None:
    for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
        sink.add(chunk)
    stream.close()


def ssh_argv(host: str, remote: str | None, options: list[str], *flags: str | None) -> list[str]:
    """An OpenSSH command line: `-F config`, `-l user`, `-p port` and `-i identity` from
    `flags` (config, user, port, identity; None: left out), `-o` options, then `--`, the host
    and the remote command (None: a control command such as `-O exit` is among the options)."""
    argv = ["ssh", "-T"]
    for flag, value in zip(("-F", "-l", "-p", "-i"), flags, strict=False):
        if value:
            argv += [flag, os.path.expanduser(value) if flag == "-i" else value]
    for option in options:
        argv += ["-o", option]
    return [*argv, "--", host, *([remote] if remote is not None else [])]


def ssh_shows(args: list[str], key: str, timeout_s: float) -> str | None:
    """The value of `key` (lowercase, as it prints) in `ssh -G ARGS`: the client's settings for
    that connection, the user's ssh config applied; None: not shown, or no ssh to ask."""
    try:
        shown = subprocess.run(
            ["ssh", "-G", *args], capture_output=True, text=True, timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        ).stdout  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in shown.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip():
            return value.strip()
    return None


def reason(stderr: str, reasons: tuple[tuple[str, str], ...], otherwise: str) -> str:
    """ssh's complaint as the one line an operator can act on: the text of the first needle
    found in it, else its last line."""
    low = stderr.lower()
    for needle, text in reasons:
        if needle in low:
            return text
    return (stderr.strip().splitlines()[-1:] or [otherwise])[0]
