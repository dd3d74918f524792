"""Fixtures for the project's own tests (tests/ only: the shipped suite never loads this)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sparkfabric.transport import sockets


def _left_by_this_process() -> set[Path]:
    found: set[Path] = set()
    for base in {*sockets.candidates(), "/tmp"}:
        found |= set(Path(base).glob(sockets.folder_prefix() + "*"))
    return found


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_in_tmp() -> Iterator[None]:
    """Tests leave nothing in /tmp: every ssh control folder this run made is gone at its end
    (named after this process, so runs side by side do not count each other's)."""
    before = _left_by_this_process()
    yield
    left = sorted(_left_by_this_process() - before)
    assert not left, f"tests left these in /tmp (close every SshTransport): {left}"
