"""One local process (the nodes' ssh clients and the switch console's) whose two streams are
read to the end in threads (a pipe nobody reads stalls it) and capped, head and tail kept."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from typing import IO

DEFAULT_OUTPUT_CAP_BYTES = 16 * 1024 * 1024
"""Most output kept per command and stream: a tool printing without end costs bounded memory."""
_MARKER_MAX = 256


def _cut_marker(dropped: int, cap_bytes: int) -> str:
    return (
        f"\n[sparkfabric: {dropped} bytes of output dropped here: only the first and last "
        f"{cap_bytes // 2} bytes of a stream are kept (output_cap_mib in cluster.yaml)]\n"
    )


class CappedOutput:
    """One output stream as it arrives: its head (banners, a JSON start) and its tail (the
    summary) up to `cap_bytes` in all; what lies between is counted and shown as a marker."""

    def __init__(self, cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES) -> None:
        self.cap_bytes = max(2, cap_bytes)
        self._half = self.cap_bytes // 2
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            room = self._half - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            if not chunk:
                return
            self._tail.append(chunk)
            self._tail_len += len(chunk)
            excess = self._tail_len - (self.cap_bytes - self._half)
            while excess > 0:
                first = self._tail[0]
                if len(first) <= excess:
                    self._tail.popleft()
                    cut = len(first)
                else:
                    self._tail[0] = first[excess:]
                    cut = excess
                self._tail_len -= cut
                self.dropped += cut
                excess -= cut

    def text(self) -> str:
        with self._lock:
            head = bytes(self._head).decode(errors="replace")
            tail = b"".join(self._tail).decode(errors="replace")
            if not self.dropped:
                return head + tail
            return head + _cut_marker(self.dropped, self.cap_bytes) + tail


def cap_text(text: str, cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES) -> str:
    """`text` cut as CappedOutput would (a text already cut so stays as it is)."""
    data = text.encode(errors="replace")
    if len(data) <= cap_bytes + _MARKER_MAX:
        return text
    out = CappedOutput(cap_bytes)
    out.add(data)
    return out.text()


class Proc:
    """One ssh client process (the nodes' and the switch's) whose two streams are read to the
    end in threads, each capped: megabytes never block it (a stalled pipe hangs ssh). With
    `hold_stdin`, its stdin is a pipe nothing is written to: closing it (or this process
    ending) tells the node's supervisor to end the command."""

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
        self.out = CappedOutput(cap_bytes)
        self.err = CappedOutput(cap_bytes)
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._threads = [
            threading.Thread(target=_drain, args=(self.popen.stdout, self.out), daemon=True),
            threading.Thread(target=_drain, args=(self.popen.stderr, self.err), daemon=True),
        ]
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


def ssh_argv(
    host: str,
    remote: str | None,
    options: list[str],
    *,
    config: str | None = None,
    user: str | None = None,
    port: int | None = None,
    identity_file: str | None = None,
) -> list[str]:
    """An OpenSSH command line (the nodes' and the switch console's): `-o` options, then `--`,
    the host and the remote command (None: a control command such as `-O exit` is among the
    options)."""
    argv = ["ssh", "-T", *(["-F", config] if config else [])]
    for option in options:
        argv += ["-o", option]
    argv += [*(["-l", user] if user else []), *(["-p", str(port)] if port else [])]
    if identity_file:
        argv += ["-i", os.path.expanduser(identity_file)]
    return [*argv, "--", host, *([remote] if remote is not None else [])]


def reason(stderr: str, reasons: tuple[tuple[str, str], ...], otherwise: str) -> str:
    """ssh's complaint as the one line an operator can act on: the text of the first needle
    found in it, else its last line."""
    low = stderr.lower()
    for needle, text in reasons:
        if needle in low:
            return text
    return (stderr.strip().splitlines()[-1:] or [otherwise])[0]
