"""Every file a lab writes, as text (pure): sshd and ssh configs, tool wrappers, cluster files.

Layout of a lab dir:
    lab.json              what `up` created (read by `down` and `status`)
    cluster.yaml          the cluster as the plugin sees it: transport ssh, `ssh_config:`
    sim-cluster.yaml      the same cluster for the simulator, with the faults it renders
    ssh_config            one Host entry per node name
    ssh/                  host key, user key, authorized_keys
    bin/NODE/             the node's wrappers, first in its PATH
    sim.sock              the resident simulator's socket (lab/resident.py)
    nodes/NODE/           sshd_config, boot.json, sshd.log, sshd.pid, etc/ (upper layer), sys/
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sparkfabric_lab.plan import SYSTEM_PATH, Hang, LabPlan, NodeLab

HANG_SECONDS = 2147483647
# One resident simulator for the whole lab (lab/resident.py): a server one node starts is
# answered by a client on another, and GPU loads heat what they heat, across calls and nodes.
SIM_SOCKET = "sim.sock"
ROUTEROS_PORT = 80


def node_dir(lab_dir: Path, node: str) -> Path:
    return lab_dir / "nodes" / node


def bin_dir(lab_dir: Path, node: str) -> Path:
    return lab_dir / "bin" / node


def node_path(lab_dir: Path, node: str) -> str:
    return f"{bin_dir(lab_dir, node)}:{SYSTEM_PATH}"


def sshd_config(lab_dir: Path, node: NodeLab) -> str:
    nd = node_dir(lab_dir, node.name)
    return "\n".join(
        [
            f"# sshd of lab node {node.name} (network namespace {node.ns}); sparkfabric lab",
            f"ListenAddress {node.mgmt.ip}:22",
            f"HostKey {lab_dir / 'ssh' / 'host_ed25519'}",
            f"PidFile {nd / 'sshd.pid'}",
            f"AuthorizedKeysFile {lab_dir / 'ssh' / 'authorized_keys'}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "UseDNS no",
            "PrintMotd no",
            "PrintLastLog no",
            "MaxSessions 64",
            "MaxStartups 64:30:128",
            "LogLevel ERROR",
            f"SetEnv PATH={node_path(lab_dir, node.name)}",
            "Subsystem sftp internal-sftp",
            "",
        ]
    )


def ssh_config(lab_dir: Path, plan: LabPlan) -> str:
    lines = [f"# ssh_config of the sparkfabric lab in {lab_dir}", ""]
    for node in plan.nodes:
        lines += [
            f"Host {node.name}",
            f"  HostName {node.mgmt.ip}",
            "  User root",
            f"  IdentityFile {lab_dir / 'ssh' / 'id_ed25519'}",
            "  IdentitiesOnly yes",
            "  StrictHostKeyChecking no",
            "  UserKnownHostsFile /dev/null",
            "  LogLevel ERROR",
            "",
        ]
    return "\n".join(lines)


PERFTEST_SERVERS = ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat")
"""perftest tools whose server the plugin waits for with `ss` (flows.LISTEN_WAIT_S): the
latency test's server listens on its -p port as the bandwidth tests' do."""


def sim_wrapper(lab_dir: Path, node: str, tool: str, *, python: str, package_root: str) -> str:
    q = shlex.quote
    # Every simulated tool runs supervised (lab/supervise.py): it ends as a real tool does, and
    # a perftest server holds its TCP port open for real. The supervised child is a small
    # client (lab/toolcall.py) of the lab's resident simulator (lab/resident.py).
    perftest = " --perftest" if tool in PERFTEST_SERVERS else ""
    return "\n".join(
        [
            "#!/bin/sh",
            f"# sparkfabric lab: `{tool}` needs the hardware; on this node it is simulated",
            "# (docs/lab.md). The simulator prints the tool's real output format.",
            # Scripts, not -m: no runpy, no PYTHONPATH; each imports only what is built in.
            f"exec {q(python)} -S {q(package_root)}/sparkfabric_lab/supervise.py{perftest} --"
            f" {q(python)} -S {q(package_root)}/sparkfabric_lab/toolcall.py"
            f' {q(str(lab_dir / SIM_SOCKET))} {q(node)} -- "${{0##*/}}" "$@"',
            "",
        ]
    )


def hang_wrapper(hang: Hang, otherwise: str | None) -> str:
    """A tool that never returns (when its leading arguments match); else `otherwise` runs.

    `otherwise` is the body of the tool's usual wrapper, or the real tool's path."""
    tests = [f'[ "$#" -ge {len(hang.args)} ]'] + [
        f'[ "${i + 1}" = {shlex.quote(a)} ]' for i, a in enumerate(hang.args)
    ]
    head = [
        "#!/bin/sh",
        f"# sparkfabric lab fault command_hangs: `{' '.join((hang.tool, *hang.args))}`"
        " never returns",
        f"if {' && '.join(tests)}; then exec sleep {HANG_SECONDS}; fi",
    ]
    if otherwise is None:
        tail = [f"echo '{hang.tool}: not found' >&2", "exit 127"]
    elif otherwise.startswith("#!"):
        tail = [ln for ln in otherwise.splitlines() if not ln.startswith("#")]
    else:
        tail = [f'exec {shlex.quote(otherwise)} "$@"']
    return "\n".join([*head, *tail, ""])


NCCL_TESTS = "nccl-tests/build/all_reduce_perf"
LIBNCCL = "nccl/build/lib/libnccl.so.2"


def nccl_tests_wrapper() -> str:
    return "\n".join(
        [
            "#!/bin/sh",
            "# sparkfabric lab: nccl-tests where NVIDIA's nccl playbook builds them; the ranks",
            "# mpirun starts are the simulator's. Run alone: the node's simulated all_reduce_perf.",
            'exec all_reduce_perf "$@"',
            "",
        ]
    )


def lost_wrapper(node: NodeLab, ip: str | None) -> str:
    """The tool whose first run loses the node (fault node_lost): every process in its
    namespace ends, sshd and this session's own included, as when a box powers off; ssh to it
    is refused from then on."""
    return "\n".join(
        [
            "#!/bin/sh",
            f"# sparkfabric lab fault node_lost: the first `{node.lost_on}` ends {node.name}",
            f"for pid in $({shlex.quote(ip or 'ip')} netns pids {shlex.quote(node.ns)}); do",
            '  [ "$pid" = "$$" ] || kill -KILL "$pid" 2>/dev/null',
            "done",
            "exit 255",
            "",
        ]
    )


def _header(kind: str, source: str) -> str:
    return f"# {kind}, written by `sparkfabric lab up {source}`; rewritten at every up.\n"


def derived_cluster(raw: Mapping[str, Any], lab_dir: Path, plan: LabPlan) -> dict[str, Any]:
    """The cluster as the plugin sees it: the same fields, reached over ssh, faults made real."""
    d = copy.deepcopy(dict(raw))
    d["transport"] = "ssh"
    d["ssh_config"] = str(lab_dir / "ssh_config")
    d.pop("simulate", None)
    d.pop("replay_dir", None)
    for node in d["nodes"]:
        node["ssh"] = {"host": node["name"]}
    # nccl-tests and libnccl where the nccl playbook builds them, under the lab dir: the
    # preflight looks for them on each node as on a cluster (the ranks are the simulator's).
    nccl = dict(d.get("nccl") or {})
    nccl.setdefault("binary", str(lab_dir / NCCL_TESTS))
    env = dict(nccl.get("env") or {})
    env.setdefault("LD_LIBRARY_PATH", str((lab_dir / LIBNCCL).parent))
    nccl["env"] = env
    d["nccl"] = nccl
    if isinstance(d.get("switch"), dict) and plan.switch_mgmt is not None:
        # Never the real switch: the lab's switch namespace answers RouterOS REST over HTTP
        # (lab/routeros.py), for the configured user, without a password.
        drop = ("password_env", "verify_tls", "ca_file")
        sw = {k: v for k, v in d["switch"].items() if k not in drop}
        sw.update(
            host=str(plan.switch_mgmt.ip), api="rest", api_port=ROUTEROS_PORT, allow_http=True
        )
        d["switch"] = sw
    return d


def sim_cluster(raw: Mapping[str, Any], plan: LabPlan) -> dict[str, Any]:
    """The cluster for the simulator behind the wrappers: transport sim, the faults it renders."""
    d = copy.deepcopy(dict(raw))
    d["transport"] = "sim"
    d.pop("replay_dir", None)
    d.pop("ssh_config", None)
    sim = dict(d.get("simulate") or {})
    faults = list(sim.get("faults") or [])
    sim["faults"] = [faults[i] for i in plan.sim_faults]
    d["simulate"] = sim
    return d


def dump_yaml(data: Mapping[str, Any], kind: str, source: str) -> str:
    body = yaml.safe_dump(dict(data), sort_keys=False, default_flow_style=None, width=100)
    return _header(kind, source) + body
