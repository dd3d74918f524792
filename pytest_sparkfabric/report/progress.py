"""Progress that fits a terminal: a phase's rounds and soak readings as one status line updated in
place on a TTY, or plain lines at most one per `PLAIN_EVERY_S` in a CI log. `Status` is pure;
`Terminal` writes what it returns with pytest's terminal reporter."""

from __future__ import annotations

import contextlib
import re
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_sparkfabric.shell import duration, visible

PLAIN_EVERY_S = 30.0
"""Without a TTY, a status line at most this often (the first and a phase's start always)."""
CLEAR = "\r\x1b[K"
"""Back to the line's start and erase it (ECMA-48 CR + EL)."""
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


@dataclass
class Status:
    """The status line of one run."""

    tty: bool
    width: int = 80
    phase_started: float | None = None
    last_plain: float | None = None
    open: bool = field(default=False)
    """A status line is on the screen, with the cursor at its end (TTY only)."""

    def phase(self, now: float) -> None:
        """A phase started (its own line was written): ETAs count from here."""
        self.phase_started = now
        self.last_plain = None

    def show(self, line: str, now: float) -> str | None:
        """What to write for a status update: on a TTY the line in place (no newline), else the
        plain line (with its ETA) or None when the last one is under PLAIN_EVERY_S old."""
        if self.phase_started is None:
            self.phase_started = now
        eta = eta_text(now - self.phase_started, done_share(line))
        text = f"{line}, {eta}" if eta else line
        if self.tty:
            self.open = True
            return CLEAR + text[: max(10, self.width - 1)]
        if self.last_plain is not None and now - self.last_plain < PLAIN_EVERY_S:
            return None
        self.last_plain = now
        return text

    def close(self) -> str | None:
        """Erase the status line before other output (TTY), or None when none is shown."""
        if not self.open:
            return None
        self.open = False
        return CLEAR


class Terminal:
    """Progress lines on pytest's terminal, through the terminal reporter's public API only:
    phase lines between the result letters, a status line rewritten in place on a TTY (in a CI
    log, a plain line at most every PLAIN_EVERY_S)."""

    def __init__(self, config: pytest.Config, prefix: str) -> None:
        self.config = config
        self.prefix = prefix
        self.state: Status | None = None

    def _reporter(self) -> Any:
        if self.config.get_verbosity() < 0:
            return None
        return self.config.pluginmanager.get_plugin("terminalreporter")

    def _write(self, reporter: Any, text: str, *, status: bool) -> None:
        if self.state is None:
            self.state = Status(tty=bool(reporter.isatty), width=shutil.get_terminal_size().columns)
        now = time.monotonic()
        if not status:
            self.close()
            reporter.write_line(text)
            self.state.phase(now)
            return
        was_open = self.state.open
        shown = self.state.show(text, now)
        if shown is None:
            return
        if not self.state.tty:
            reporter.write_line(shown)
            return
        if not was_open:
            reporter.ensure_newline()
        reporter.rewrite(shown.removeprefix(CLEAR), erase=True)

    def show(self, line: str, *, status: bool = False) -> None:
        reporter = self._reporter()
        if reporter is None:
            return
        # Progress is written while a test runs: step around output capture to the terminal.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        quiet = capture.global_and_fixture_disabled() if capture is not None else None
        with quiet or contextlib.nullcontext():
            self._write(reporter, visible(f"{self.prefix}: {line}"), status=status)

    def close(self) -> None:
        """Erase an open status line before pytest writes its next result."""
        reporter = self._reporter()
        if reporter is not None and self.state is not None and self.state.close() is not None:
            reporter.rewrite("", erase=True)
