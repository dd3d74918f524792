"""A lab's owner is a process, not a pid number: reused pids, other boots and zombies are gone."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from sparkfabric_lab import owner
from sparkfabric_lab.state import LabState

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc")


def test_a_live_process_runs_until_it_ends_and_its_pid_alone_proves_nothing() -> None:
    me = owner.current()
    assert me.pid == os.getpid() and me.start_ticks > 0 and me.boot_id
    assert owner.is_running(me)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        other = owner.of(sleeper.pid)
        assert other is not None and owner.is_running(other)
        # The same number, but a process started at another moment (a later one got the pid),
        # or on another boot.
        assert not owner.is_running(replace(other, start_ticks=other.start_ticks - 1))
        assert not owner.is_running(replace(other, boot_id="0" * 8 + other.boot_id[8:]))
        os.kill(sleeper.pid, signal.SIGKILL)
        os.waitid(os.P_PID, sleeper.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
        assert Path(f"/proc/{sleeper.pid}").exists()  # a zombie is gone
        assert owner.of(sleeper.pid) is None and not owner.is_running(other)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not owner.is_running(other)  # and so is an ended process


def test_the_owner_survives_lab_json(tmp_path: Path) -> None:
    state = LabState(lab_dir=str(tmp_path))
    assert state.owner is None
    state.set_owner(owner.current(), "pytest")
    state.save()
    loaded = LabState.load(tmp_path)
    assert loaded is not None and loaded.owner == owner.current()
    assert loaded.owner_cmdline == "pytest"
