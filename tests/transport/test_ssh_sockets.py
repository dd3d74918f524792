"""ssh control sockets live in a short private folder, whatever TMPDIR is, and go with close()."""

from __future__ import annotations

import gc
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from pytest_sparkfabric.transport import Job
from pytest_sparkfabric.transport import ssh as ssh_module
from pytest_sparkfabric.transport.ssh import SshTarget, SshTransport
from tests.transport.conftest import make_transport


@pytest.fixture
def long_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    long = tmp_path / ("t" * (120 - len(str(tmp_path)) - 1))
    long.mkdir()
    assert len(str(long)) == 120
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(long)
    return long


def test_a_120_character_tmpdir_does_not_stop_ssh(
    local_sshd: tuple[int, Path], long_tmpdir: Path
) -> None:
    t = make_transport(*local_sshd)
    try:
        r = t.run(Job("n1", "echo ok", 10))
        assert (r.ok, r.stdout, r.transport_error) == (True, "ok\n", None)
        folder = t._control_folder().path
        assert folder is not None and folder.parent == Path("/tmp")
        assert folder.name.startswith(f"sf{os.getpid()}-")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        (socket,) = folder.iterdir()
        assert len(str(socket)) + 17 <= ssh_module.SUN_PATH_MAX
    finally:
        t.close()
    assert not folder.exists()


def test_an_xdg_runtime_dir_is_preferred_when_short(monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = Path(tempfile.mkdtemp(prefix=ssh_module.folder_prefix(), dir="/tmp"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        made = ssh_module.make_folder()
        assert made.path is not None and made.path.parent == runtime
    finally:
        shutil.rmtree(runtime)


def test_without_a_short_folder_ssh_runs_unmultiplexed_and_says_why(
    long_tmpdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ssh_module, "candidates", lambda: [str(long_tmpdir), "/nonexistent-dir"])
    t = SshTransport({"n": SshTarget("h")})
    with pytest.warns(RuntimeWarning) as caught:
        argv = t.ssh_argv("n", "true")
    t.close()
    assert str(caught[0].message) == (
        f"sparkfabric: no short private folder for ssh control sockets ({long_tmpdir} is too "
        "long a path; /nonexistent-dir: No such file or directory): every command opens its own "
        "ssh connection, which is slower. Fix: make /tmp writable, or set XDG_RUNTIME_DIR to a "
        "short folder you own"
    )
    assert "ControlPath=none" in argv


def test_openssh_socket_path_too_long_is_named_with_its_fix(
    local_sshd: tuple[int, Path], long_tmpdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if the folder were long after all (ssh_config, ProxyJump): OpenSSH itself refuses.
    monkeypatch.setattr(ssh_module, "make_folder", lambda: ssh_module.ControlFolder(long_tmpdir))
    t = make_transport(*local_sshd)
    try:
        r = t.run(Job("n1", "true", 10))
    finally:
        t.close()
    assert r.transport_error is not None
    path = r.transport_error.split("control socket path ", 1)[1].split(" is too long")[0]
    assert path.startswith(str(long_tmpdir) + "/")
    assert r.transport_error == (
        f"n1: ssh: the control socket path {path} is too long for a unix socket "
        f"({len(path)} bytes, while 107 is the most, ssh's 17-byte suffix included); the node "
        "itself was not tried. Fix: shorten ControlPath in your ssh_config (ProxyJump hosts use "
        "it too), e.g. ControlPath ~/.ssh/cm-%C"
    )


def test_a_transport_never_closed_leaves_no_folder() -> None:
    t = SshTransport({"n": SshTarget("h")})
    t.ssh_argv("n", "true")
    folder = t._control_folder().path
    assert folder is not None and folder.is_dir()
    del t
    gc.collect()
    assert not folder.exists()


def test_socket_names_differ_by_target() -> None:
    a = ssh_module.socket_name("spark-1", "10.0.0.11", "nvidia", None)
    assert a == ssh_module.socket_name("spark-1", "10.0.0.11", "nvidia", None)
    assert a != ssh_module.socket_name("spark-2", "10.0.0.11", "nvidia", None)
    assert a != ssh_module.socket_name("spark-1", "10.0.0.11", "nvidia", 2222)
    assert len(a) == 12
