"""Fixtures for the project's own tests (tests/ only: the shipped suite
never uses this, though pytest loads it from `testpaths` in a suite run from a checkout)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from pytest_sparkfabric.transport import ssh as ssh_module


def _cancel(signum: int, _frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one must not cut the teardown
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    # A cancelled run (CI cancel, `timeout`) gets SIGTERM: end it as ^C ends it, so every
    # fixture's teardown runs and each lab the run built is taken down (tests/lab).
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _cancel)


def _left_by_this_process() -> set[Path]:
    found: set[Path] = set()
    for base in {*ssh_module.candidates(), "/tmp"}:
        found |= set(Path(base).glob(ssh_module.folder_prefix() + "*"))
    return found


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_in_tmp(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests leave nothing in /tmp: every ssh control folder this run made is gone at its end
    (named after this process, so runs side by side do not count each other's). Not in a run
    of the shipped suite from a checkout (`--cluster`: pytest loads this file for testpaths),
    whose transport is still open when its last item ends."""
    if request.config.getoption("sparkfabric_cluster", None):
        yield
        return
    before = _left_by_this_process()
    yield
    left = sorted(_left_by_this_process() - before)
    assert not left, f"tests left these in /tmp (close every SshTransport): {left}"
