"""argparse that reports errors as values (a tool prints its own message and exit code)."""

from __future__ import annotations

import argparse
import re
from typing import Any, NoReturn


class ArgError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Parser(argparse.ArgumentParser):
    def __init__(self, prog: str, **kwargs: Any) -> None:
        super().__init__(
            prog=prog, add_help=False, allow_abbrev=False, exit_on_error=False, **kwargs
        )

    def error(self, message: str) -> NoReturn:
        raise ArgError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise ArgError(message or "")


_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$")


def duration_s(text: str) -> float:
    """coreutils sleep/timeout durations: 10, 1.5, 2m, 1h, 1d."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"invalid time interval '{text}'")
    factor = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return float(m.group(1)) * factor
