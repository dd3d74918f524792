"""A lab's owner is a process, not a pid number: reused pids, other boots and zombies are gone."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from sparkfabric_lab import owner
from sparkfabric_lab.state import LabState

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    p = subprocess.Popen(["sleep", "60"])
    try:
        yield p
    finally:
        p.kill()
        p.wait()


def test_this_process_is_running() -> None:
    me = owner.current()
    assert me.pid == os.getpid() and me.start_ticks > 0 and me.boot_id
    assert owner.is_running(me)


def test_another_live_process_is_running(sleeper: subprocess.Popen[bytes]) -> None:
    other = owner.of(sleeper.pid)
    assert other is not None and owner.is_running(other)


def test_an_ended_process_is_gone(sleeper: subprocess.Popen[bytes]) -> None:
    other = owner.of(sleeper.pid)
    assert other is not None
    sleeper.kill()
    sleeper.wait()
    assert not owner.is_running(other)


def test_a_zombie_is_gone(sleeper: subprocess.Popen[bytes]) -> None:
    other = owner.of(sleeper.pid)
    assert other is not None
    os.kill(sleeper.pid, signal.SIGKILL)
    os.waitid(os.P_PID, sleeper.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
    assert Path(f"/proc/{sleeper.pid}").exists()
    assert owner.of(sleeper.pid) is None and not owner.is_running(other)


def test_a_reused_pid_or_another_boot_is_gone(sleeper: subprocess.Popen[bytes]) -> None:
    live = owner.of(sleeper.pid)
    assert live is not None
    # The same number, but a process started at another moment: a later one got the pid.
    assert not owner.is_running(replace(live, start_ticks=live.start_ticks - 1))
    assert not owner.is_running(replace(live, boot_id="0" * 8 + live.boot_id[8:]))


def test_the_owner_survives_lab_json(tmp_path: Path) -> None:
    state = LabState(lab_dir=str(tmp_path))
    assert state.owner is None
    state.set_owner(owner.current(), "pytest")
    state.save()
    loaded = LabState.load(tmp_path)
    assert loaded is not None and loaded.owner == owner.current()
    assert loaded.owner_cmdline == "pytest"
