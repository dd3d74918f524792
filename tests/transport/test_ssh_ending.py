"""Nothing is left running on a node: deadlines, stops, lost connections and a double Ctrl-C
all end the command's whole process group, and a command that already exited is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.transport import Job
from pytest_sparkfabric.transport import ssh as ssh_module
from pytest_sparkfabric.transport.ssh import SshTransport
from pytest_sparkfabric.transport.wrapper import GRACE_S
from tests.transport.conftest import make_transport

REPO = Path(__file__).resolve().parents[2]


def _marker() -> str:
    """A sleep whose command line is unique to one test (`sleep 300.<random>`)."""
    return f"sleep 300.{uuid.uuid4().int % 10**9}"


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    # Only the command itself counts: not the ssh client, the supervisor or a shell around it.
    return [ln for ln in out.splitlines() if ln.split(maxsplit=1)[-1] == marker]


def _until(predicate: object, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return bool(predicate())  # type: ignore[operator]


# `sh -c "trap '' TERM; sleep ..."; true`: the direct child of `timeout` (a shell running two
# commands) dies on TERM, the tool it started ignores TERM and lives on in the group.
def _term_ignoring(marker: str) -> str:
    return f"sh -c \"trap '' TERM; {marker}\"; true"


@pytest.mark.slow
def test_a_deadline_ends_a_tool_that_ignores_term_under_a_dying_shell(ssh: SshTransport) -> None:
    marker = _marker()
    started = time.monotonic()
    r = ssh.run(Job("n1", _term_ignoring(marker), 1))
    assert r.timed_out and r.transport_error is None, r
    assert time.monotonic() - started < 30  # its deadline and the grace, not the tool's 300 s
    assert _alive(marker) == []


@pytest.mark.slow
def test_stopping_ends_a_tool_that_ignores_term(ssh: SshTransport) -> None:
    marker = _marker()
    bg = ssh.start(Job("n1", _term_ignoring(marker), 60))
    assert _until(lambda: _alive(marker), 10)
    started = time.monotonic()
    r = bg.stop()
    assert time.monotonic() - started < 30  # the grace, not the tool's 300 s
    assert not r.timed_out and r.transport_error is None, r
    assert _alive(marker) == []


def test_a_command_that_exited_is_not_signalled_again(
    ssh: SshTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    bg = ssh.start(Job("n1", "echo bye", 30))
    assert _until(bg.done, 10)
    spawned: list[list[str]] = []
    real = ssh_module._Proc

    def counting(argv: list[str], **kw: object) -> object:
        spawned.append(argv)
        return real(argv, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ssh_module, "_Proc", counting)
    r = bg.stop()
    assert spawned == []  # no second connection carrying a kill
    assert (r.rc, r.stdout, r.stderr) == (0, "bye\n", "")


def test_a_server_that_cannot_start_is_done_at_once(ssh: SshTransport) -> None:
    bg = ssh.start(Job("n1", "no-such-tool-here --server", 60))
    assert _until(bg.done, 5)
    gap = could_not_run(bg.stop())
    assert gap is not None and gap.reason == (
        "n1: no-such-tool-here: command not found (no-such-tool-here is not installed, or not "
        "on PATH)"
    )


def test_a_lost_connection_is_named_and_leaves_nothing(ssh: SshTransport) -> None:
    marker = _marker()
    bg = ssh.start(Job("n1", f"echo start; {marker}", 60))
    assert _until(lambda: _alive(marker), 10)
    pid = int(_alive(marker)[0].split()[0])
    # The sshd process serving the connection, above the command: ending it drops the link.
    while (comm := Path(f"/proc/{pid}/comm").read_text().strip()) != "sshd":
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])
    assert comm == "sshd"
    os.kill(pid, signal.SIGKILL)
    r = bg.wait()
    assert r.transport_error == f"n1: ssh: connection lost during 'echo start; {marker}'"
    assert r.failure() == r.transport_error
    assert _until(lambda: not _alive(marker), 5), _alive(marker)


def test_a_missing_sudo_is_named(ssh: SshTransport) -> None:
    if subprocess.run(["sh", "-c", "command -v sudo"], capture_output=True).returncode == 0:
        pytest.skip("sudo is installed here (the message is tested as text in test_base)")
    assert ssh.run(Job("n1", "true", 10)).ok
    ssh._root["n1"] = False  # as if logged in as a user: sudo jobs go through sudo
    r = ssh.run(Job("n1", "ethtool -m enp1s0f0np0", 10, sudo=True))
    gap = could_not_run(r)
    assert gap is not None and gap.reason == (
        "n1: sudo: command not found (sudo is not installed, or not on PATH)"
    )


_DOUBLE_CTRL_C = """
import sys, time
from pathlib import Path
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.transport import Job
from tests.transport.conftest import make_transport

t = make_transport(int(sys.argv[1]), Path(sys.argv[2]))
jobs = sys.argv[3:]
try:
    for cmd in jobs[1:]:
        t.start(Job("n1", cmd, 120))
    print("ready", flush=True)
    t.run_many([Job("n1", jobs[0], 120), Job("n1", jobs[0] + " ", 120)])
finally:
    t.close()
"""


@pytest.mark.slow
def test_two_quick_ctrl_c_end_every_remote_group(local_sshd: tuple[int, Path]) -> None:
    port, keydir = local_sshd
    markers = [_marker() for _ in range(4)]
    commands = [markers[0], _term_ignoring(markers[1]), markers[2], _term_ignoring(markers[3])]
    p = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_DOUBLE_CTRL_C), str(port), str(keydir),
         *commands],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
        assert _until(lambda: all(_alive(m) for m in markers), 15), [_alive(m) for m in markers]
        os.killpg(p.pid, signal.SIGINT)  # what a terminal does on Ctrl-C ...
        time.sleep(0.03)
        os.killpg(p.pid, signal.SIGINT)  # ... twice, quickly
        p.wait(timeout=2 * GRACE_S + 20)
    finally:
        if p.poll() is None:
            p.kill()
    assert _until(lambda: not any(_alive(m) for m in markers), GRACE_S + 5), [
        _alive(m) for m in markers
    ]


@pytest.mark.slow
def test_output_beyond_the_cap_is_cut_with_a_marker(local_sshd: tuple[int, Path]) -> None:
    t = make_transport(*local_sshd, output_cap_bytes=2**20)
    try:
        r = t.run(Job("n1", "head -c 100000000 /dev/zero | tr '\\0' x; echo END", 60))
    finally:
        t.close()
    assert r.ok
    dropped = 100_000_004 - 2**20
    assert f"[sparkfabric: {dropped} bytes of output dropped here" in r.stdout
    assert r.stdout.startswith("x" * 2**19) and r.stdout.endswith("x" * 1000 + "END\n")
    assert len(r.stdout) < 2**20 + 300
