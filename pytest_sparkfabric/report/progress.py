"""Progress that fits a terminal: a phase's rounds and soak readings as one status line updated in
place on a TTY, or plain lines at most one per `PLAIN_EVERY_S` in a CI log."""

from __future__ import annotations

import contextlib
import re
import shutil
import time
from typing import Any

import pytest

from pytest_sparkfabric.shell import duration, visible

PLAIN_EVERY_S = 30.0
"""Without a TTY, a status line at most this often (the first and a phase's start always)."""
_ROUND = re.compile(r"\bround (\d+)/(\d+)\b")
_SHARE = re.compile(r"\((\d+)%\)")


def done_share(line: str) -> float | None:
    """How much of its phase a status line says is done: `round 3/5` is the start of round 3
    (2 of 5 done), `soak 2 min of 10 min (20%)` is a fifth; None when the line does not say."""
    if m := _ROUND.search(line):
        k, n = int(m[1]), int(m[2])
        return (k - 1) / n if n else None
    if m := _SHARE.search(line):
        return min(1.0, int(m[1]) / 100)
    return None


def eta_text(elapsed_s: float, share: float | None) -> str | None:
    """`ETA 4 min 10 s` from the time so far and the share done, or None before anything is
    done."""
    if share is None or share <= 0 or elapsed_s <= 0:
        return None
    return f"ETA {duration(max(0.0, elapsed_s * (1 - share) / share))}"


class Terminal:
    """Progress lines on pytest's terminal, through the terminal reporter's public API only:
    phase lines between the result letters, a status line rewritten in place on a TTY (in a CI
    log, a plain line at most every PLAIN_EVERY_S)."""

    def __init__(self, config: pytest.Config, prefix: str) -> None:
        self.config = config
        self.prefix = prefix
        self.phase_started: float | None = None
        self.last_plain: float | None = None
        self.open = False
        """A status line is on the screen, with the cursor at its end (TTY only)."""

    def _reporter(self) -> Any:
        if self.config.get_verbosity() < 0:
            return None
        return self.config.pluginmanager.get_plugin("terminalreporter")

    def show(self, line: str, *, status: bool = False) -> None:
        reporter = self._reporter()
        if reporter is None:
            return
        # Progress is written while a test runs: step around output capture to the terminal.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        quiet = capture.global_and_fixture_disabled() if capture is not None else None
        with quiet or contextlib.nullcontext():
            self._write(reporter, visible(f"{self.prefix}: {line}"), status=status)

    def _write(self, reporter: Any, text: str, *, status: bool) -> None:
        now = time.monotonic()
        if not status:  # a phase started (its own line): ETAs count from here
            self.close()
            reporter.write_line(text)
            self.phase_started, self.last_plain = now, None
            return
        if self.phase_started is None:
            self.phase_started = now
        eta = eta_text(now - self.phase_started, done_share(text))
        text = f"{text}, {eta}" if eta else text
        if reporter.isatty:
            if not self.open:
                reporter.ensure_newline()
            self.open = True
            reporter.rewrite(text[: max(10, shutil.get_terminal_size().columns - 1)], erase=True)
        elif self.last_plain is None or now - self.last_plain >= PLAIN_EVERY_S:
            self.last_plain = now
            reporter.write_line(text)

    def close(self) -> None:
        """Erase an open status line before pytest writes its next result."""
        reporter = self._reporter()
        if reporter is not None and self.open:
            self.open = False
            reporter.rewrite("", erase=True)
