"""The one rule for "could not measure" (measure/prereq.py), as the words a user reads."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.measure.prereq import SUDO_ETHTOOL_FIX, could_not_run, prereq_of
from pytest_sparkfabric.transport import RunResult

NOT_ON_PATH = "spark-2: {}: command not found ({} is not installed, or not on PATH)"
NCCL_TESTS_FIX = (
    "git clone https://github.com/NVIDIA/nccl-tests.git ~/nccl-tests && cd ~/nccl-tests && make "
    "MPI=1 MPI_HOME=/usr/lib/aarch64-linux-gnu/openmpi NCCL_HOME=$HOME/nccl/build"
)
NCCL_FIX = (
    "git clone -b v2.28.3-1 https://github.com/NVIDIA/nccl.git ~/nccl && cd ~/nccl && make -j "
    'src.build NVCC_GENCODE="-gencode=arch=compute_121,code=sm_121"; the ranks find it through '
    "-x LD_LIBRARY_PATH=$HOME/nccl/build/lib:... (nccl.launcher's default)"
)


def _run(command: str, rc: int, stderr: str = "", **kw: object) -> RunResult:
    return RunResult("spark-2", command, rc, "", stderr, 0.1, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "rc", "stderr", "reason", "missing", "fix"),
    [
        ("cd /x && ib_write_bw -d y", 127, "sh: 1: ib_write_bw: not found\n",
         NOT_ON_PATH.format("ib_write_bw", "perftest"), "perftest", "sudo apt install perftest"),
        ("ethtool -m enp1s0f0np0", 127, "bash: line 1: sudo: command not found\n",
         NOT_ON_PATH.format("sudo", "sudo"), "sudo",
         "install sudo, or connect as root (ssh user in cluster.yaml)"),
        ("ss -Hltn 'sport = :18515'", 127, "bash: line 1: ss: command not found\n",
         NOT_ON_PATH.format("ss", "iproute2"), "iproute2", "sudo apt install iproute2"),
        # Open MPI's help-orterun.txt "orterun:executable-not-found": the lines naming the binary.
        ("mpirun -np 2 all_reduce_perf", 1,
         "mpirun was unable to find the specified executable file, and therefore\ndid not "
         "launch the job.\nNode:       spark-1\nExecutable: all_reduce_perf\n",
         NOT_ON_PATH.format("all_reduce_perf", "nccl-tests"), "nccl-tests", NCCL_TESTS_FIX),
        ("mpirun -np 2 ~/nccl-tests/build/all_reduce_perf", 127,
         "/home/nvidia/nccl-tests/build/all_reduce_perf: error while loading shared libraries: "
         "libnccl.so.2: cannot open shared object file: No such file or directory\n",
         "spark-2: libnccl.so.2 not found by the loader (NCCL is not built, or not on the ranks' "
         "LD_LIBRARY_PATH)", "NCCL", NCCL_FIX),
        # Refused sudo: the sudoers line for exactly `ethtool -m`.
        ("ethtool -m enp1s0f0np0", 1, "sudo: a password is required\n",
         "spark-2: `sudo -n ethtool -m` was refused: sudo asks for a password", "sudo ethtool -m",
         SUDO_ETHTOOL_FIX),
    ],
)  # fmt: skip
def test_a_missing_prerequisite_names_its_package_and_install_command(
    command: str, rc: int, stderr: str, reason: str, missing: str, fix: str
) -> None:
    gap = could_not_run(_run(command, rc, stderr))
    assert gap is not None
    assert (gap.reason, gap.nodes, gap.missing, gap.fix) == (reason, ("spark-2",), missing, fix)


def test_a_lost_connection_is_ssh_and_a_run_that_ran_is_judged_on_its_output() -> None:
    lost = _run("ib_write_bw", 255, transport_error="spark-2: ssh: connection lost during 'x'")
    gap = could_not_run(lost)
    assert gap is not None and (gap.reason, gap.missing) == (lost.transport_error, "ssh")
    assert could_not_run(_run("ib_write_bw", 1, "Couldn't connect to 10.0.0.2:18515\n")) is None
    assert could_not_run(_run("sleep 99", 124, timed_out=True)) is None
    assert could_not_run(None) is None
    # A tool nobody listed still says what to do.
    assert prereq_of("/opt/x/bin/frobnicate").fix == "install frobnicate on the node, or fix PATH"
