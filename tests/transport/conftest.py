"""A throwaway sshd on 127.0.0.1 with its own keys, for the real-ssh transport tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_sparkfabric.transport.ssh import SshTarget, SshTransport

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def until(predicate: Callable[[], object], limit_s: float) -> bool:
    """Whether `predicate()` holds within `limit_s` (polled, then asked once more at the end)."""
    deadline = time.monotonic() + limit_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(predicate())


def free_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def local_sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    if os.geteuid() != 0 or not os.path.exists(SSHD) or not shutil.which("ssh"):
        pytest.skip("needs root, sshd and ssh (apt-get install openssh-server openssh-client)")
    d = tmp_path_factory.mktemp("sshd")
    for name in ("host", "user"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True
        )
    (d / "authorized_keys").write_text((d / "user.pub").read_text())
    port = free_port()
    cfg = d / "sshd_config"
    cfg.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPidFile {d / 'sshd.pid'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nUsePAM no\n"
        "StrictModes no\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    try:
        yield port, d
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def make_transport(
    port: int, keydir: Path, connect_timeout_s: int = 5, cap: int = 16 * 2**20, **more: SshTarget
) -> SshTransport:
    """A transport to the local sshd as node n1 (and the `more` nodes)."""
    return SshTransport(
        {"n1": SshTarget("127.0.0.1", "root", port, str(keydir / "user")), **more},
        connect_timeout_s=connect_timeout_s,
        extra_options=("StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"),
        output_cap_bytes=cap,
    )


def tiny_tmpfs(where: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted at `where` (made here) while the caller's fixture lasts."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tiny tmpfs")
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)])
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?)")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.fixture
def ssh(local_sshd: tuple[int, Path]) -> Iterator[SshTransport]:
    t = make_transport(*local_sshd)
    try:
        yield t
    finally:
        t.close()
