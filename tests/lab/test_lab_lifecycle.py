"""A half-finished up and a cancelled test run: whatever happens, nothing of the lab is left
behind (names in use and `lab up | status | down`: test_lab_isolation; a suite run stopped by
Ctrl-C, twice, with commands in flight: test_lab_transport)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sparkfabric_lab import LabError, build, host, services
from sparkfabric_lab.state import LabState
from tests.lab import labkit

pytestmark = labkit.lab_marks()


SWITCH, RING = str(labkit.EXAMPLES / "switch-4.yaml"), labkit.EXAMPLES / "ring-4.yaml"


def test_a_half_finished_up_is_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_args: object) -> None:
        raise LabError("sshd refused to start (injected)")

    monkeypatch.setattr(services, "start_sshds", fail)
    lab_dir = labkit.new_lab_dir()
    prefix, mgmt = labkit.unique_prefix(), labkit.free_mgmt()
    with pytest.raises(LabError, match="injected"):
        build.up(RING, lab_dir, prefix=prefix, mgmt=mgmt, keep_on_failure=True)
    state = LabState.load(lab_dir)
    assert state is not None and state.phase == "failed"
    assert state.namespaces and all(host.netns_exists(ns) for ns in state.namespaces)
    assert build.down(lab_dir) == []
    labkit.gone(lab_dir, state)
    # without --keep-on-failure, up cleans up after itself
    with pytest.raises(LabError, match="injected"):
        build.up(RING, lab_dir, prefix=prefix, mgmt=mgmt)
    assert not lab_dir.exists() and not any(host.netns_exists(ns) for ns in state.namespaces)
    lab_dir.parent.rmdir()


def test_an_up_cut_short_in_the_network_is_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = host.ip_batch

    def third_fails(ns: str | None, lines: list[str]) -> None:
        calls.append(ns)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C while the cables are being laid
        real(ns, lines)

    monkeypatch.setattr(host, "ip_batch", third_fails)
    lab_dir = labkit.new_lab_dir()
    prefix = labkit.unique_prefix()
    with pytest.raises(KeyboardInterrupt):
        build.up(Path(SWITCH), lab_dir, prefix=prefix, mgmt=labkit.free_mgmt())
    assert not lab_dir.exists()
    assert not [ns for ns in os.listdir(host.NETNS_DIR) if ns.startswith(prefix)]
    assert not host.link_exists(f"{prefix}mgmt")
    lab_dir.parent.rmdir()


HOLDS_A_LAB = """
import time
from tests.lab import labkit

def test_holds_a_lab():
    with labkit.lab_of(labkit.EXAMPLES / "switch-4.yaml") as lab:
        print("LAB", lab.dir, flush=True)
        time.sleep(600)
"""


def test_a_cancelled_test_run_takes_its_labs_down(tmp_path: Path) -> None:
    """SIGTERM (a CI cancel, `timeout`) to a test run holding a lab: tests/conftest.py ends the
    run as ^C does, and the lab's teardown removes it: namespaces, sshd, resident simulator."""
    test = tmp_path / "test_holds_a_lab.py"
    test.write_text(HOLDS_A_LAB)
    argv = [sys.executable, "-m", "pytest", "-s", "-p", "tests.conftest", "-n", "0",
            "-p", "no:cacheprovider", str(test)]  # fmt: skip
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         cwd=labkit.REPO)  # fmt: skip
    assert p.stdout is not None
    seen = ""
    while "LAB " not in seen and p.poll() is None:
        seen += p.stdout.readline()
    assert "LAB " in seen, seen[-3000:]
    lab_dir = Path(seen.split("LAB ", 1)[1].split()[0])
    state = LabState.load(lab_dir)
    assert state is not None and state.resident_pid is not None
    pids = [state.resident_pid, *state.sshd.values()]
    p.send_signal(signal.SIGTERM)
    rest, _ = p.communicate(timeout=120)
    assert p.returncode == 2 and "KeyboardInterrupt" in rest, rest[-3000:]
    assert [ns for ns in state.namespaces if host.netns_exists(ns)] == []
    assert [pid for pid in pids if str(lab_dir) in host.proc_cmdline(pid)] == []
    assert not lab_dir.exists()
