"""SshTransport against a real sshd in a lab node: a stop and a Ctrl-C (once or twice) end the
remote command's whole group (a tool that traps TERM too), closing leaves no session. Deadlines,
floods of output and unreachable nodes over a real sshd: tests/transport/test_ssh.py."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric.transport import Job, Transport, ssh
from tests.lab import labkit
from tests.transport.conftest import until

pytestmark = labkit.lab_marks()
# A tool that traps TERM (its handler only notes it) under a shell running two commands: the
# shell, `timeout`'s direct child, dies on TERM, the tool lives on in the group.
TRAP = "lab-term-trapper"
TERM_TRAPPER = (
    "python3 -c 'import signal, time; signal.signal(signal.SIGTERM, lambda *a: None); "
    f"time.sleep(300)' {TRAP}; true"
)


@pytest.fixture(scope="module")
def lab() -> Iterator[labkit.Lab]:
    with labkit.lab_of(labkit.EXAMPLES / "direct-2.yaml") as lab:
        yield lab


@pytest.fixture
def transport(lab: labkit.Lab) -> Iterator[Transport]:
    t = lab.transport()
    yield t
    t.close()


def _running(lab: labkit.Lab, what: str) -> list[str]:
    return [p for ps in lab.stray_processes().values() for p in ps if what in p]


def _left(lab: labkit.Lab) -> list[str]:
    """What runs on the lab's nodes besides the open connection's sshd, after 5 s at most."""

    def left() -> list[str]:
        return [p for ps in lab.stray_processes().values() for p in ps if "sshd:" not in p]

    until(lambda: not left(), 5)
    return left()


def test_closing_the_transport_leaves_no_session(lab: labkit.Lab) -> None:
    t = lab.transport()
    assert t.run(Job("spark-1", "true", 5)).ok
    t.close()
    assert labkit.strays_after(lab) == {}


def test_a_stopped_tool_that_traps_term_is_ended(lab: labkit.Lab, transport: Transport) -> None:
    """And a plain two-process group: both ended whole, within the grace (not the tools' 300 s)."""
    two = "sleep 300.5"
    jobs = [Job("spark-1", TERM_TRAPPER, 120), Job("spark-1", f"{two} & {two}; wait", 120)]
    running = [transport.start(job) for job in jobs]

    def both() -> list[str]:  # the two sleeps themselves, not the shell around them
        return [p for p in _running(lab, two) if p.split(maxsplit=1)[1] == two]

    assert until(lambda: _running(lab, TRAP) and len(both()) == 2, 15), lab.stray_processes()
    started = time.monotonic()
    for bg in running:
        r = bg.stop()
        assert r.transport_error is None and not r.timed_out, r
    assert time.monotonic() - started < 30
    assert _left(lab) == []


def test_a_server_that_exited_is_not_signalled_again(
    transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    bg = transport.start(Job("spark-1", "echo served", timeout_s=30))
    assert until(bg.done, 15)
    connections: list[object] = []
    real = ssh.Proc

    def counting(*args: Any, **kwargs: Any) -> Any:
        connections.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssh, "Proc", counting)
    r = bg.stop()
    assert connections == [] and (r.rc, r.stdout) == (0, "served\n")


_HOLD = f"""
from pytest_sparkfabric.transport import Job

def test_hold(fabric):
    t = fabric.transport
    for _ in range(3):
        t.start(Job("spark-1", {TERM_TRAPPER!r}, 120))
    print("ready", flush=True)
    t.run_many([Job("spark-1", "sleep 300", 120), Job("spark-1", {TERM_TRAPPER!r}, 120)])
"""


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_once_or_twice_quickly_leaves_nothing_on_the_nodes(
    lab: labkit.Lab, tmp_path: Path, presses: int
) -> None:
    (tmp_path / "test_hold.py").write_text(_HOLD)
    argv = labkit.pytest_argv(lab.cluster_yaml, ["-s", "-p", "no:html", "test_hold.py"])
    p = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)  # fmt: skip
    try:
        assert p.stdout is not None
        for line in p.stdout:
            if "ready" in line:
                break
        assert until(lambda: len(_running(lab, TRAP)) >= 4, 30), lab.stray_processes()
        for press in range(presses):  # Ctrl-C in a terminal, once or twice quickly
            time.sleep(0.03 * press)
            os.killpg(p.pid, signal.SIGINT)
        rest, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 2 and "KeyboardInterrupt" in rest, rest[-2000:]
    assert labkit.strays_after(lab, 10) == {}, labkit.who_holds(lab)
