"""The ssh transport against a real sshd: deadlines, stops and lost links end the command's whole
process group, streams never block, an unreachable node fails fast with one line; control sockets
live in a short private folder whatever TMPDIR is (double Ctrl-C: tests/lab/test_lab_transport)."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.transport import Job
from pytest_sparkfabric.transport import make_transport as transport_for
from pytest_sparkfabric.transport import ssh as ssh_module
from pytest_sparkfabric.transport.host import make_host
from pytest_sparkfabric.transport.record import RecordingTransport
from pytest_sparkfabric.transport.ssh import (
    SshTarget,
    SshTransport,
    read_marks,
    remote_command,
    supervisor,
)
from tests.transport.conftest import free_port, make_transport, until

REPO = Path(__file__).resolve().parents[2]


def _marker() -> str:
    """A sleep whose command line is unique to one test (`sleep 300.<random>`)."""
    return f"sleep 300.{uuid.uuid4().int % 10**9}"


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    # Only the command itself counts: not the ssh client, the supervisor or a shell around it.
    return [ln for ln in out.splitlines() if ln.split(maxsplit=1)[-1] == marker]


def test_the_supervisor_runs_in_sh_and_the_host_comes_after_double_dash() -> None:
    text = supervisor(Job("n", "ib_write_bw -d x", 30))
    assert text.startswith("echo @@sparkfabric-start >&2; ")
    assert "timeout -k 5 30 sh -c 'ib_write_bw -d x' 3<&- & " in text
    assert "timeout -k 5 2.4 sh -c" in supervisor(Job("n", "x", 2.4))  # never rounded down
    assert remote_command(Job("n", "x", 30), as_root=True).startswith("exec sh -c ")
    sudo = remote_command(Job("n", "ethtool -m x", 5, sudo=True), as_root=False)
    assert sudo.startswith("exec sh -c ") and "sudo -n ethtool -m x" in sudo
    t = SshTransport({"n": SshTarget("-oProxyCommand=x", "u", 22)})
    argv = t.ssh_argv("n", "id -u")
    t.close()
    assert argv[-3:] == ["--", "-oProxyCommand=x", "id -u"] and argv.count("--") == 1
    # What the login shell or ssh print before the supervisor starts is not the command's.
    marks = "rm: cannot remove x\n@@sparkfabric-start\nerr\n@@sparkfabric-rc:3\n"
    assert read_marks(marks) == (True, 3, "err\n")
    assert read_marks("ssh: Connection refused\n") == (False, None, "ssh: Connection refused\n")


def test_output_rc_a_missing_tool_and_testinfra(ssh: SshTransport) -> None:
    r = ssh.run(Job("n1", "echo out; echo err >&2; exit 3", 10))
    assert (r.rc, r.stdout, r.stderr) == (3, "out\n", "err\n")
    assert not r.timed_out and r.transport_error is None
    # A command exiting 255 (ssh's own failure status) is not an ssh failure.
    r = ssh.run(Job("n1", "echo 'Permission denied' >&2; exit 255", 10))
    assert (r.rc, r.transport_error, r.timed_out) == (255, None, False)
    # A server that cannot start is done at once.
    bg = ssh.start(Job("n1", "no-such-tool-here --server", 60))
    assert until(bg.done, 5)
    gap = could_not_run(bg.stop())
    assert gap is not None and gap.reason == (
        "n1: no-such-tool-here: command not found (no-such-tool-here is not installed, or not "
        "on PATH)"
    )
    host = make_host(ssh, "n1")
    assert host.file("/etc/hostname").exists
    assert host.run("echo %s", "a b").stdout == "a b\n"


@pytest.mark.slow
def test_deadlines_end_the_remote_process_group(ssh: SshTransport) -> None:
    plain, ignores, under_shell = _marker(), _marker(), _marker()
    started = time.monotonic()
    r_plain, r_ignores, r_shell, r_late = ssh.run_many(
        [
            Job("n1", plain, 2),
            Job("n1", f"trap '' TERM; {ignores}", 2),  # timeout's own child ignores TERM
            # `timeout`'s child, a shell running two commands, dies on TERM; its tool ignores it
            Job("n1", f"sh -c \"trap '' TERM; {under_shell}\"; true", 1),
            Job("n1", "sleep 2.2; echo late", 2.4),  # a fractional deadline is kept whole
        ]
    )
    assert time.monotonic() - started < 30  # the deadlines and the grace, not the tools' 300 s
    assert r_plain.timed_out and r_plain.rc == 124
    assert "did not finish within its deadline" in (r_plain.failure() or "")
    for r in (r_ignores, r_shell):
        assert r.timed_out and r.transport_error is None, r
    assert r_late.ok and r_late.stdout == "late\n"
    assert [_alive(m) for m in (plain, ignores, under_shell)] == [[], [], []]


def test_stop_returns_promptly_while_another_thread_waits(ssh: SshTransport) -> None:
    bg = ssh.start(Job("n1", "sleep 60", 60))
    waiter = threading.Thread(target=bg.wait)
    waiter.start()
    time.sleep(0.5)
    started = time.monotonic()
    result = bg.stop()
    waiter.join(timeout=15)
    assert time.monotonic() - started < 10 and not waiter.is_alive()
    assert not result.timed_out and result.transport_error is None


def test_a_lost_connection_is_named_and_leaves_nothing(ssh: SshTransport) -> None:
    marker = _marker()
    bg = ssh.start(Job("n1", f"echo start; {marker}", 60))
    assert until(lambda: _alive(marker), 10)
    pid = int(_alive(marker)[0].split()[0])
    # The sshd process serving the connection, above the command: ending it drops the link.
    while Path(f"/proc/{pid}/comm").read_text().strip() != "sshd":
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])
    os.kill(pid, signal.SIGKILL)
    r = bg.wait()
    assert r.failure() == f"n1: ssh: connection lost during 'echo start; {marker}'"
    assert until(lambda: not _alive(marker), 5), _alive(marker)


def test_a_missing_sudo_is_named(ssh: SshTransport) -> None:
    if subprocess.run(["sh", "-c", "command -v sudo"], capture_output=True).returncode == 0:
        pytest.skip("sudo is installed here (the message is tested as text in test_base)")
    assert ssh.run(Job("n1", "true", 10)).ok
    ssh.up["n1"] = False  # as if logged in as a user: sudo jobs go through sudo
    r = ssh.run(Job("n1", "ethtool -m enp1s0f0np0", 10, sudo=True))
    gap = could_not_run(r)
    assert (
        gap and gap.reason == "n1: sudo: command not found (sudo is not installed, or not on PATH)"
    )


@pytest.mark.slow
def test_megabytes_on_both_streams_never_block_and_are_cut_with_a_marker(
    local_sshd: tuple[int, Path],
) -> None:
    t = make_transport(*local_sshd, cap=2**20)
    flood = "head -c {} /dev/zero | tr '\\0' x"
    r = t.run(Job("n1", f"{flood.format(5_000_000)} >&2; {flood.format(10**8)}; echo END", 60))
    t.close()
    assert r.ok
    # stderr also carried the supervisor's two marks (20 + 19 bytes), taken out after the cut.
    assert f"[sparkfabric: {5_000_039 - 2**20} bytes of output dropped here" in r.stderr
    assert f"[sparkfabric: {100_000_004 - 2**20} bytes of output dropped here" in r.stdout
    assert r.stdout.startswith("x" * 2**19) and r.stdout.endswith("x" * 1000 + "END\n")
    assert len(r.stdout) < 2**20 + 300


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


@pytest.mark.slow
def test_refused_and_silent_nodes_fail_with_one_line_without_stalling_the_others(
    local_sshd: tuple[int, Path],
) -> None:
    port, keydir = local_sshd
    # A listener that never speaks: the TCP handshake succeeds, the SSH banner never comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        dead = SshTarget("127.0.0.1", "root", silent.getsockname()[1])
        gone = SshTarget("127.0.0.1", port=free_port())
        t = make_transport(port, keydir, 4, dead=dead, gone=gone)
        started = time.monotonic()

        def run(node: str) -> tuple[str | None, float]:
            return t.run(Job(node, "true", 10)).transport_error, time.monotonic() - started

        with ThreadPoolExecutor() as pool:
            (hung, dead_s), (ok, ok_s), (refused, gone_s) = pool.map(run, ["dead", "n1", "gone"])
        # Later jobs reuse the verdict instead of connecting again.
        assert t.run(Job("gone", "true", 10)).transport_error == refused
        t.close()
    assert ok is None and ok_s < dead_s < 4 + 7  # ssh's ConnectTimeout, or our watchdog after it
    assert gone_s < 5 and refused == "gone: ssh: connection refused"
    assert (hung or "").startswith("dead: ssh: connection timed out after")


@pytest.fixture
def long_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    long = tmp_path / ("t" * (120 - len(str(tmp_path)) - 1))
    long.mkdir()
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(long) and len(str(long)) == 120
    return long


def test_a_short_xdg_runtime_dir_is_preferred_and_an_unclosed_transport_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = Path(tempfile.mkdtemp(prefix=ssh_module.folder_prefix(), dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    made = ssh_module.make_folder()
    shutil.rmtree(runtime)
    assert made is not None and made.parent == runtime
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    t = SshTransport({"n": SshTarget("h")})
    t.ssh_argv("n", "true")
    folder = t.control_folder()
    assert folder is not None and folder.is_dir()
    del t
    gc.collect()
    assert not folder.exists()
    names = {ssh_module.socket_name(*w) for w in [("a", "h", "u", None), ("b", "h", "u", None)]}
    names.add(ssh_module.socket_name("a", "h", "u", 2222))
    assert len(names) == 3 and {len(n) for n in names} == {12}
    assert ssh_module.socket_name("a", "h", "u", None) in names  # the same each time


def test_without_a_short_folder_ssh_runs_unmultiplexed_and_says_why(
    long_tmpdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ssh_module, "candidates", lambda: [str(long_tmpdir), "/nonexistent-dir"])
    t = SshTransport({"n": SshTarget("h")})
    with pytest.warns(RuntimeWarning) as caught:
        assert "ControlPath=none" in t.ssh_argv("n", "true")
    t.close()
    assert str(caught[0].message) == (
        f"sparkfabric: no short private folder for ssh control sockets ({long_tmpdir} is too "
        "long a path; /nonexistent-dir: No such file or directory): every command opens its own "
        "ssh connection, which is slower. Fix: make /tmp writable, or set XDG_RUNTIME_DIR to a "
        "short folder you own"
    )


def test_a_120_character_tmpdir_does_not_stop_ssh_but_a_long_socket_path_is_named(
    local_sshd: tuple[int, Path], long_tmpdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = make_transport(*local_sshd)
    r = t.run(Job("n1", "echo ok", 10))
    folder = t.control_folder()
    assert (r.ok, r.stdout) == (True, "ok\n") and folder and folder.parent == Path("/tmp")
    assert folder.name.startswith(f"sf{os.getpid()}-")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [len(str(p)) + 17 <= 107 for p in folder.iterdir()] == [True]
    t.close()
    assert not folder.exists()
    # As if the folder were long after all (ssh_config, ProxyJump): OpenSSH itself refuses.
    monkeypatch.setattr(ssh_module, "make_folder", lambda: long_tmpdir)
    t = make_transport(*local_sshd)
    error = t.run(Job("n1", "true", 10)).transport_error or ""
    t.close()
    path = error.split("control socket path ", 1)[-1].split(" is too long")[0]
    assert path.startswith(str(long_tmpdir) + "/")
    assert error == (
        f"n1: ssh: the control socket path {path} is too long for a unix socket "
        f"({len(path)} bytes, while 107 is the most, ssh's 17-byte suffix included); the node "
        "itself was not tried. Fix: shorten ControlPath in your ssh_config (ProxyJump hosts use "
        "it too), e.g. ControlPath ~/.ssh/cm-%C"
    )


def test_ssh_config_and_the_output_cap_come_from_the_cluster_file(tmp_path: Path) -> None:
    text = (REPO / "examples" / "cluster.example.yaml").read_text()

    def ssh(extra: str, record: Path | None = None) -> SshTransport:
        changed = text.replace("ssh_config: ~/.ssh/config", extra)
        t = transport_for(parse_cluster(changed, path=tmp_path / "c.yaml"), record_dir=record)
        inner = t.inner if isinstance(t, RecordingTransport) else t
        assert isinstance(inner, SshTransport)
        return inner

    # ~ is the home folder, a relative path is relative to the cluster file.
    for value, expected in [("~/x", os.path.expanduser("~/x")), ("ssh/cfg", f"{tmp_path}/ssh/cfg")]:
        argv = ssh(f"ssh_config: {value}").ssh_argv("spark-1", "true")
        assert argv[argv.index("-F") + 1] == expected
    assert ssh("output_cap_mib: 2", record=tmp_path / "rec").output_cap_bytes == 2 * 2**20
    assert ssh("").output_cap_bytes == 16 * 2**20
