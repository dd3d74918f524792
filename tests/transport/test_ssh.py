"""The ssh transport against a real sshd: deadlines end remote processes, streams never block."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from pytest_sparkfabric.transport import Job
from pytest_sparkfabric.transport.host import make_host
from pytest_sparkfabric.transport.ssh import SshTarget, SshTransport, remote_command
from pytest_sparkfabric.transport.wrapper import supervisor
from tests.transport.conftest import make_transport


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    # The local ssh client's argv holds the command too: only remote processes count.
    return [line for line in out.splitlines() if "pgrep" not in line and " ssh " not in line]


def test_remote_command_runs_the_supervisor_in_sh() -> None:
    text = supervisor(Job("n", "ib_write_bw -d x", 30))
    assert text.startswith("echo @@sparkfabric-start >&2; ")
    assert "timeout -k 5 30 sh -c 'ib_write_bw -d x' 3<&- & " in text
    assert remote_command(Job("n", "x", 30), as_root=True).startswith("exec sh -c ")
    sudo = remote_command(Job("n", "ethtool -m x", 5, sudo=True), as_root=False)
    assert sudo.startswith("exec sh -c ") and "sudo -n ethtool -m x" in sudo


def test_the_host_comes_after_double_dash() -> None:
    t = SshTransport({"n": SshTarget("-oProxyCommand=x", "u", 22)})
    try:
        argv = t.ssh_argv("n", "id -u")
    finally:
        t.close()
    assert argv[-3:] == ["--", "-oProxyCommand=x", "id -u"]
    assert argv.index("--") == len(argv) - 3


def test_command_output_and_rc(ssh: SshTransport) -> None:
    r = ssh.run(Job("n1", "echo out; echo err >&2; exit 3", 10))
    assert (r.rc, r.stdout, r.stderr, r.timed_out) == (3, "out\n", "err\n", False)
    assert r.transport_error is None


@pytest.mark.slow
def test_deadline_ends_the_remote_process(ssh: SshTransport) -> None:
    marker = f"sleep 30{uuid.uuid4().int % 1000}.5"
    started = time.monotonic()
    r = ssh.run(Job("n1", marker, 2))
    assert r.timed_out and r.rc == 124
    assert time.monotonic() - started < 10
    assert "did not finish within its deadline" in (r.failure() or "")
    assert _alive(marker) == []


def test_stopping_a_background_job_kills_its_process_group(ssh: SshTransport) -> None:
    marker = f"sleep 40{uuid.uuid4().int % 1000}.5"
    bg = ssh.start(Job("n1", f"{marker} & {marker}; wait", 60))
    deadline = time.monotonic() + 10
    while not _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(marker)
    bg.stop()
    deadline = time.monotonic() + 10
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(marker) == []


def test_megabytes_on_stderr_do_not_hang(ssh: SshTransport) -> None:
    r = ssh.run(Job("n1", "head -c 5000000 /dev/zero | tr '\\0' x >&2; echo done", 30))
    assert r.stdout == "done\n"
    assert len(r.stderr) == 5_000_000


@pytest.mark.slow
def test_many_concurrent_jobs_share_one_connection(ssh: SshTransport) -> None:
    jobs = [Job("n1", f"echo {i}", 20) for i in range(20)]
    results = ssh.run_many(jobs)
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(20)]


def test_refused_connection_fails_fast_with_one_line(local_sshd: tuple[int, Path]) -> None:
    _, keydir = local_sshd
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    t = SshTransport({"spark-3": SshTarget("127.0.0.1", "root", closed_port, str(keydir / "user"))})
    try:
        started = time.monotonic()
        r = t.run(Job("spark-3", "true", 10))
        assert time.monotonic() - started < 5
        assert r.transport_error == "spark-3: ssh: connection refused"
        # Later jobs reuse the verdict instead of connecting again.
        assert t.run(Job("spark-3", "true", 10)).transport_error == r.transport_error
    finally:
        t.close()


@pytest.mark.slow
def test_silent_host_times_out_after_connect_timeout(local_sshd: tuple[int, Path]) -> None:
    _, keydir = local_sshd
    # A listener that never speaks: the TCP handshake succeeds, the SSH banner never comes.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    port = silent.getsockname()[1]
    try:
        t = SshTransport(
            {"spark-3": SshTarget("127.0.0.1", "root", port, str(keydir / "user"))},
            connect_timeout_s=2,
        )
        started = time.monotonic()
        r = t.run(Job("spark-3", "true", 10))
        elapsed = time.monotonic() - started
        t.close()
    finally:
        silent.close()
    assert elapsed < 9
    assert r.transport_error is not None
    assert r.transport_error.startswith("spark-3: ssh: connection timed out after")


@pytest.mark.slow
def test_an_unreachable_node_does_not_stall_the_others(local_sshd: tuple[int, Path]) -> None:
    port, keydir = local_sshd
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        t = SshTransport(
            {
                "ok": SshTarget("127.0.0.1", "root", port, str(keydir / "user")),
                "dead": SshTarget("127.0.0.1", "root", silent.getsockname()[1], None),
            },
            connect_timeout_s=8,
            extra_options=("StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"),
        )
        done: dict[str, float] = {}
        started = time.monotonic()

        def run(node: str) -> None:
            t.run(Job(node, "true", 10))
            done[node] = time.monotonic() - started

        threads = [threading.Thread(target=run, args=(n,)) for n in ("dead", "ok")]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        t.close()
    finally:
        silent.close()
    assert done["ok"] < done["dead"]


@pytest.mark.slow
def test_testinfra_host_goes_through_the_transport(local_sshd: tuple[int, Path]) -> None:
    t = make_transport(*local_sshd)
    try:
        host = make_host(t, "n1")
        assert host.file("/etc/hostname").exists
        assert host.run("echo %s", "a b").stdout == "a b\n"
    finally:
        t.close()


@pytest.mark.slow
def test_a_tool_that_ignores_term_is_killed_and_reported_as_timed_out(ssh: SshTransport) -> None:
    marker = f"sleep 50{uuid.uuid4().int % 1000}.5"
    r = ssh.run(Job("n1", f"trap '' TERM; {marker}", 2))
    assert r.timed_out and r.transport_error is None
    assert _alive(marker) == []


@pytest.mark.slow
def test_fractional_deadlines_are_not_rounded_down(ssh: SshTransport) -> None:
    assert "timeout -k 5 2.4 sh -c" in supervisor(Job("n", "x", 2.4))
    r = ssh.run(Job("n1", "sleep 2.2; echo late", 2.4))
    assert r.ok and r.stdout == "late\n"


def test_a_command_exiting_255_is_not_an_ssh_failure(ssh: SshTransport) -> None:
    r = ssh.run(Job("n1", "echo 'Permission denied' >&2; exit 255", 10))
    assert r.rc == 255 and r.transport_error is None and not r.timed_out


def test_stop_returns_promptly_while_another_thread_waits(ssh: SshTransport) -> None:
    bg = ssh.start(Job("n1", "sleep 60", 60))
    waiter = threading.Thread(target=bg.wait)
    waiter.start()
    time.sleep(0.5)
    started = time.monotonic()
    result = bg.stop()
    waiter.join(timeout=15)
    assert time.monotonic() - started < 10
    assert not result.timed_out and result.transport_error is None


@pytest.mark.slow
def test_commands_beyond_the_session_limit_keep_stderr_clean(ssh: SshTransport) -> None:
    background = [ssh.start(Job("n1", "sleep 30", 30)) for _ in range(10)]
    try:
        results = ssh.run_many([Job("n1", f"echo {i}", 20) for i in range(8)])
    finally:
        for bg in background:
            bg.stop()
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(8)]
    assert all(r.stderr == "" for r in results), [r.stderr for r in results]
