"""The few host facts and commands the lab needs: root, `ip netns`, namespaces, links."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path

from sparkfabric_lab import LabError

NETNS_DIR = Path("/run/netns")
BUILD_LOCK = Path("/run/sparkfabric-lab.lock")


def run(
    argv: Sequence[str], *, stdin: str | None = None, check: bool = True, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    try:
        r = subprocess.run(
            list(argv), input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise LabError(f"{argv[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from None
    if check and r.returncode != 0:
        why = (r.stderr.strip() or r.stdout.strip() or f"exit status {r.returncode}").splitlines()
        raise LabError(f"`{' '.join(argv)}` failed: {why[-1]}")
    return r


def ip_batch(ns: str | None, lines: Sequence[str]) -> None:
    """Many `ip` commands in one process (`-force`: all run; the first error is reported)."""
    if not lines:
        return
    argv = ["ip", *(["-n", ns] if ns else []), "-batch", "-"]
    r = run(argv, stdin="\n".join(lines) + "\n", check=False)
    if r.returncode != 0:
        where = f" in namespace {ns}" if ns else " on the host"
        why = r.stderr.strip().splitlines()
        raise LabError(f"ip{where} failed: {'; '.join(why[-2:]) or r.returncode}")


def why_not_root() -> str | None:
    if os.geteuid() != 0:
        return (
            "the lab needs root: it creates network namespaces, veth links and an sshd per "
            "node. Run it with sudo (sudo sparkfabric lab up FILE)."
        )
    return None


def why_no_netns() -> str | None:
    if shutil.which("ip") is None:
        return "`ip` is missing: install iproute2 (apt-get install iproute2)."
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        why = r.stderr.strip().splitlines()[-1:] or [f"exit status {r.returncode}"]
        return (
            f"`ip netns` does not work here ({why[0]}): the lab needs iproute2's ip with "
            "network namespace support (not busybox ip) and a kernel with namespaces."
        )
    return None


def why_no_sshd() -> str | None:
    missing = [t for t in ("/usr/sbin/sshd", "ssh-keygen", "ssh") if shutil.which(t) is None]
    if missing:
        return f"{', '.join(missing)} missing: install openssh-server and openssh-client."
    return None


def require_lab_host() -> None:
    """Raise LabError when this machine cannot hold a lab (every reason at once)."""
    reasons = [r for r in (why_not_root(), why_no_netns(), why_no_sshd()) if r]
    if reasons:
        raise LabError("sparkfabric lab: " + "\n  ".join(reasons))


def netns_exists(name: str) -> bool:
    return (NETNS_DIR / name).exists()


def link_exists(name: str) -> bool:
    return run(["ip", "link", "show", "dev", name], check=False).returncode == 0


def netns_id(name: str) -> int | None:
    """The namespace's identity: the inode of its nsfs file (`ip netns add` bind-mounts it)."""
    try:
        return (NETNS_DIR / name).stat().st_ino
    except OSError:
        return None


def link_index(name: str) -> int | None:
    """A host link's identity: its ifindex (never reused while the link exists)."""
    try:
        return int(Path(f"/sys/class/net/{name}/ifindex").read_text())
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def build_lock(timeout_s: float = 120.0) -> Iterator[None]:
    """One `lab up` at a time on this host between the check that names and the management
    subnet are free and their creation: two builds (two test runs) never take the same."""
    fd = os.open(BUILD_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LabError(
                        f"another `sparkfabric lab up` held {BUILD_LOCK} for over "
                        f"{timeout_s:g} s: wait for it, or find it with `fuser {BUILD_LOCK}`"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def ns_pids(ns: str) -> list[int]:
    r = run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in r.stdout.split() if p.isdigit()]


def kill_all_in(ns: str, wait_s: float = 5.0) -> list[int]:
    """SIGKILL every process in namespace `ns`; the pids still there after `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        pids = ns_pids(ns)
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def host_ipv4() -> list[tuple[str, IPv4Interface]]:
    r = run(["ip", "-j", "-4", "addr", "show"], check=False)
    out: list[tuple[str, IPv4Interface]] = []
    try:
        data = json.loads(r.stdout or "[]")
    except ValueError:
        return out
    for iface in data:
        for a in iface.get("addr_info", []):
            if a.get("family") == "inet":
                out.append((iface["ifname"], IPv4Interface(f"{a['local']}/{a['prefixlen']}")))
    return out


def subnet_in_use(net: IPv4Network) -> str | None:
    for dev, addr in host_ipv4():
        if addr.network.overlaps(net):
            return f"{addr} on {dev}"
    return None


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
