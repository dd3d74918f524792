"""The one rule for "could not measure": a run that never reached the fabric (a tool missing,
sudo refused, the node lost) is a NotMeasured naming the prerequisite and the command that
installs or allows it, never a fabric failure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.transport import RunResult
from pytest_sparkfabric.transport.base import missing_command


@dataclass(frozen=True, slots=True)
class Prereq:
    name: str
    commands: tuple[str, ...]
    fix: str


# Fixes from NVIDIA's dgx-spark-playbooks (connect-two-sparks: `sudo apt install perftest`;
# nccl/README.md: libopenmpi-dev, NCCL built in ~/nccl, nccl-tests with `make MPI=1` in
# ~/nccl-tests) and the tools' own docs (gpu-burn README: `make COMPUTE=..`; lldpd, iperf3:
# Ubuntu packages). docs/node-setup.md says the same per marker.
PREREQS: tuple[Prereq, ...] = (
    Prereq("perftest", ("ib_write_bw", "ib_write_lat"), "sudo apt install perftest"),
    Prereq("ibverbs-utils", ("ibv_devinfo",), "sudo apt install ibverbs-utils"),
    Prereq("iperf3", ("iperf3",), "sudo apt install iperf3"),
    Prereq("lldpd", ("lldpctl",), "sudo apt install lldpd && sudo systemctl enable --now lldpd"),
    Prereq(
        "gpu-burn",
        ("gpu_burn", "gpu-burn"),
        "git clone https://github.com/wilicc/gpu-burn ~/gpu-burn && cd ~/gpu-burn && "
        "make COMPUTE=121 (then soak.gpu_load: ~/gpu-burn/gpu_burn -m 50% {duration_s})",
    ),
    Prereq("Open MPI", ("mpirun",), "sudo apt-get install -y libopenmpi-dev openmpi-bin"),
    Prereq(
        "nccl-tests",
        ("all_reduce_perf", "all_gather_perf", "reduce_scatter_perf"),
        "git clone https://github.com/NVIDIA/nccl-tests.git ~/nccl-tests && cd ~/nccl-tests && "
        "make MPI=1 MPI_HOME=/usr/lib/aarch64-linux-gnu/openmpi NCCL_HOME=$HOME/nccl/build",
    ),
    Prereq(
        "NCCL",
        ("libnccl.so.2", "libnccl.so"),
        "git clone -b v2.28.3-1 https://github.com/NVIDIA/nccl.git ~/nccl && cd ~/nccl && "
        'make -j src.build NVCC_GENCODE="-gencode=arch=compute_121,code=sm_121"; the ranks find '
        "it through -x LD_LIBRARY_PATH=$HOME/nccl/build/lib:... (nccl.launcher's default)",
    ),
    Prereq("iproute2", ("ip", "ss", "dcb"), "sudo apt install iproute2"),
    Prereq("ethtool", ("ethtool",), "sudo apt install ethtool"),
    Prereq("sudo", ("sudo",), "install sudo, or connect as root (ssh user in cluster.yaml)"),
)
SUDO_ETHTOOL_FIX = (
    'echo "$USER ALL=(root) NOPASSWD: /usr/sbin/ethtool -m *" | '
    "sudo tee /etc/sudoers.d/sparkfabric && sudo chmod 0440 /etc/sudoers.d/sparkfabric"
)
SSH_FIX = "power the node on and check that `ssh <node> true` answers without a password"
# sudo(8) -n: "a password is required"; without a terminal: "a terminal is required".
_SUDO_REFUSED = re.compile(r"^sudo: (a password is required|a terminal is required)", re.M)
# Open MPI's help text when a rank's binary is not on that node's PATH: 4.x prints "mpirun was
# unable to find the specified executable file, and therefore did not launch the job" then
# `Node:` and `Executable:` lines (as on the open-mpi users list); old orterun had no "specified".
_MPI_NOT_FOUND = re.compile(r"was unable to find the (?:specified )?executable", re.I)
_MPI_EXE = re.compile(r"Executable:\s*(\S+)")
# ld.so(8): `<prog>: error while loading shared libraries: libnccl.so.2: cannot open shared
# object file: No such file or directory`, exit status 127 (mpirun passes a rank's on).
_NO_LIBRARY = re.compile(r"error while loading shared libraries: (\S+?): cannot open shared")


def prereq_of(command: str) -> Prereq:
    name = command.rsplit("/", 1)[-1]
    found = next((p for p in PREREQS if name in p.commands), None)
    return found or Prereq(name, (name,), f"install {name} on the node, or fix PATH")


def could_not_run(r: RunResult | None) -> NotMeasured | None:
    """Why the run never reached what it measures, or None (it ran: judge its output)."""
    if r is None:
        return None
    if r.transport_error and "ssh:" in r.transport_error:
        return NotMeasured(r.transport_error, nodes=[r.node], missing="ssh", fix=SSH_FIX)
    if _SUDO_REFUSED.search(r.stderr) or (r.transport_error and "sudo" in r.transport_error):
        asked = " ".join(r.command.split()[:2])
        return NotMeasured(
            f"{r.node}: `sudo -n {asked}` was refused: sudo asks for a password",
            nodes=[r.node],
            missing=f"sudo {asked}",
            fix=SUDO_ETHTOOL_FIX if asked.startswith("ethtool") else f"allow `{asked}` in sudoers",
        )
    if lib := _NO_LIBRARY.search(r.stderr):
        p = prereq_of(lib.group(1))
        why = f"{lib.group(1)} not found by the loader ({p.name} is not built, or not on the ranks'"
        return lacking(r.node, p, why + " LD_LIBRARY_PATH)")
    if _MPI_NOT_FOUND.search(r.stderr):
        m = _MPI_EXE.search(r.stderr)
        return tool_missing(r.node, m.group(1) if m else "all_reduce_perf")
    if r.rc == 127 and not r.timed_out:
        tool = missing_command(r.stderr) or (r.command.split() or [r.command])[0]
        return tool_missing(r.node, tool)
    return None


def lacking(node: str, p: Prereq, why: str) -> NotMeasured:
    """`node` lacks prerequisite `p`: not measured, `why` after the node's name, `p`'s fix."""
    return NotMeasured(f"{node}: {why}", nodes=[node], missing=p.name, fix=p.fix)


def tool_missing(node: str, tool: str) -> NotMeasured:
    """The one wording of a command the node cannot find (a run's rc 127, or the preflight)."""
    p = prereq_of(tool)
    return lacking(
        node, p, f"{tool}: command not found ({p.name} is not installed, or not on PATH)"
    )
