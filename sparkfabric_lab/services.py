"""The processes a lab runs: an sshd per node, the resident simulator (and switch REST)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sparkfabric_lab import LabError, files, host, systree
from sparkfabric_lab.plan import LabPlan
from sparkfabric_lab.state import LabState

Log = Callable[[str], None]
SSHD_READY_S = 15.0
PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def _macs(ns: str) -> dict[str, str]:
    r = host.run(["ip", "-n", ns, "-j", "link", "show"])
    return {i["ifname"]: i.get("address", "") for i in json.loads(r.stdout or "[]")}


def start_sshds(plan: LabPlan, state: LabState, lab_dir: Path, log: Log) -> None:
    t0 = time.monotonic()
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for node in plan.nodes:
        nd = files.node_dir(lab_dir, node.name)
        boot = {
            "etc_upper": str(nd / "etc" / "upper"),
            "etc_work": str(nd / "etc" / "work"),
            "sys_root": str(nd / "sys"),
            "files": systree.render(node, _macs(node.ns)),
            "exec": [
                "/usr/sbin/sshd",
                "-D",
                "-f",
                str(nd / "sshd_config"),
                "-E",
                str(nd / "sshd.log"),
            ],
        }
        write(nd / "boot.json", json.dumps(boot, indent=1, sort_keys=True))
        if not node.sshd:
            continue
        with (nd / "boot.log").open("wb") as out:
            argv = ["ip", "netns", "exec", node.ns, sys.executable, "-m",
                    "sparkfabric_lab.boot", str(nd / "boot.json")]  # fmt: skip
            procs[node.name] = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env=env, cwd="/",
            )  # fmt: skip
        state.sshd[node.name] = procs[node.name].pid
        state.save()
    wait_ready(plan, procs, lab_dir)
    log(f"sshd: {len(procs)} nodes listening ({time.monotonic() - t0:.1f} s)")


def start_resident(plan: LabPlan, state: LabState, lab_dir: Path, raw: Any, log: Log) -> None:
    """The lab's resident simulator (lab/resident.py): the tool wrappers' answers on a unix
    socket; with a switch, run in its namespace, also the RouterOS REST on its address."""
    argv = [sys.executable, "-m", "sparkfabric_lab.resident", "--cluster",
            str(lab_dir / "sim-cluster.yaml"), "--socket", str(lab_dir / files.SIM_SOCKET),
            "--lab-dir", str(lab_dir)]  # fmt: skip
    rest = None
    if plan.switch_ns is not None and plan.switch_mgmt is not None:
        rest = (str(plan.switch_mgmt.ip), files.ROUTEROS_PORT)
        user = str((raw.get("switch") or {}).get("user", ""))
        argv = ["ip", "netns", "exec", plan.switch_ns, *argv, "--listen", rest[0],
                "--port", str(rest[1]), "--user", user]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT}
    with (lab_dir / "resident.log").open("wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, env=env,
                                cwd="/")  # fmt: skip
    state.resident_pid = proc.pid
    if rest is not None:
        state.routeros = f"http://{rest[0]}:{rest[1]}/rest"
    state.save()
    deadline = time.monotonic() + SSHD_READY_S
    while not _answers(lab_dir / files.SIM_SOCKET, rest):
        if proc.poll() is not None:
            why = tail(lab_dir / "resident.log") or f"exit status {proc.returncode}"
            raise LabError(f"the lab's resident simulator did not start: {why}")
        if time.monotonic() > deadline:
            raise LabError(f"the lab's resident simulator is not answering after "
                           f"{SSHD_READY_S:g} s (see {lab_dir}/resident.log)")  # fmt: skip
        time.sleep(0.05)
    log(f"simulator: resident, pid {proc.pid}"
        + (f"; switch: RouterOS REST (simulated) at {state.routeros}" if rest else ""))  # fmt: skip


def _answers(sock_path: Path, rest: tuple[str, int] | None) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.2)
            s.connect(str(sock_path))
        if rest is not None:
            with socket.create_connection(rest, timeout=0.2):
                pass
    except OSError:
        return False
    return True


def wait_ready(plan: LabPlan, procs: dict[str, subprocess.Popen[bytes]], lab_dir: Path) -> None:
    waiting = {n.name: n for n in plan.nodes if n.name in procs}
    deadline = time.monotonic() + SSHD_READY_S
    while waiting:
        for name, node in list(waiting.items()):
            rc = procs[name].poll()
            if rc is not None:
                nd = files.node_dir(lab_dir, name)
                why = tail(nd / "boot.log") or tail(nd / "sshd.log") or f"exit status {rc}"
                raise LabError(f"sshd of {name} did not start: {why}")
            try:
                with socket.create_connection((str(node.mgmt.ip), 22), timeout=0.2):
                    del waiting[name]
            except OSError:
                pass
        if waiting and time.monotonic() > deadline:
            raise LabError(
                f"sshd of {', '.join(waiting)} not listening after {SSHD_READY_S:g} s "
                f"(see {lab_dir}/nodes/*/sshd.log)"
            )
        if waiting:
            time.sleep(0.02)


def tail(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""
