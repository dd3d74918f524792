"""`lab status`: is the lab in a dir up, node by node."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path

from sparkfabric_lab import host, owner
from sparkfabric_lab.state import LabState

NO_LAB = 3


@dataclass
class Status:
    lab_dir: Path
    state: LabState | None
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def rc(self) -> int:
        if self.state is None:
            return NO_LAB
        return 1 if self.problems else 0


def _alive(pid: int) -> bool:
    """Running (a zombie, killed but not yet reaped, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _listening(ip: str) -> bool:
    try:
        with socket.create_connection((ip, 22), timeout=0.5):
            return True
    except OSError:
        return False


def status(lab_dir: Path) -> Status:
    state = LabState.load(lab_dir)
    st = Status(lab_dir, state)
    if state is None:
        st.lines.append(f"no lab in {lab_dir} (sparkfabric lab up FILE --dir {lab_dir})")
        return st
    st.lines.append(
        f"lab in {lab_dir}: {state.topology}, {len(state.node_ns)} nodes, {state.phase}, "
        f"from {state.source}"
    )
    built_by = state.owner
    if built_by is not None and owner.is_running(built_by):
        st.lines.append(
            f"  held by running process {built_by.pid} ({state.owner_cmdline[:80]}): it "
            "removes the lab when it ends"
        )
    for node, ns in state.node_ns.items():
        ip = state.mgmt_ips.get(node, "?")
        if not host.netns_exists(ns):
            st.problems.append(f"{node}: namespace {ns} is missing")
            st.lines.append(f"  {node:<12} netns {ns}: MISSING")
            continue
        if node in state.no_sshd:
            # Missing on purpose, but missing: the node does not answer, and status says so.
            sshd = "no sshd (fault node_unreachable)"
            st.problems.append(f"{node}: {sshd}: ssh is refused")
        elif node not in state.sshd:
            sshd = "sshd not started"
            st.problems.append(f"{node}: {sshd}")
        elif not _alive(state.sshd[node]):
            sshd = f"sshd (pid {state.sshd[node]}) NOT RUNNING"
            st.problems.append(f"{node}: {sshd}")
        elif not _listening(ip):
            sshd = f"sshd (pid {state.sshd[node]}) not answering on {ip}:22"
            st.problems.append(f"{node}: {sshd}")
        else:
            sshd = f"sshd pid {state.sshd[node]} listening"
        st.lines.append(f"  {node:<12} netns {ns}, ssh root@{ip}: {sshd}")
    if state.resident_pid is not None:
        ok = _alive(state.resident_pid)
        rest = f", RouterOS REST {state.routeros}" if state.routeros else ""
        st.lines.append(f"  {'simulator':<12} resident pid {state.resident_pid}{rest}: "
                        f"{'running' if ok else 'NOT RUNNING'}")  # fmt: skip
        if not ok:
            st.problems.append("the resident simulator (simulated tools, switch REST) is "
                               "not running")  # fmt: skip
    for ns in state.namespaces:
        if ns not in state.node_ns.values() and not host.netns_exists(ns):
            st.problems.append(f"namespace {ns} is missing")
    for link in state.host_links:
        if not host.link_exists(link):
            st.problems.append(f"host link {link} is missing")
    for line in state.applied:
        st.lines.append(f"  fault {line}")
    if state.phase == "up":
        st.lines.append(f"  run: pytest --cluster={lab_dir / 'cluster.yaml'}")
    for p in st.problems:
        st.lines.append(f"  problem: {p}")
    return st
