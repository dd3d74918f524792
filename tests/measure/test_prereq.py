"""The one rule for "could not measure" (measure/prereq.py), as the words a user reads."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.measure.prereq import SUDO_ETHTOOL_FIX, could_not_run, prereq_of
from pytest_sparkfabric.transport import RunResult


def _run(command: str, rc: int, stderr: str = "", **kw: object) -> RunResult:
    return RunResult("spark-2", command, rc, "", stderr, 0.1, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "stderr", "reason", "missing", "fix"),
    [
        (
            "cd /x && ib_write_bw -d y",
            "sh: 1: ib_write_bw: not found\n",
            "spark-2: ib_write_bw: command not found (perftest is not installed, or not on PATH)",
            "perftest",
            "sudo apt install perftest",
        ),
        (
            "ethtool -m enp1s0f0np0",
            "bash: line 1: sudo: command not found\n",
            "spark-2: sudo: command not found (sudo is not installed, or not on PATH)",
            "sudo",
            "install sudo, or connect as root (ssh user in cluster.yaml)",
        ),
        (
            "ss -Hltn 'sport = :18515'",
            "bash: line 1: ss: command not found\n",
            "spark-2: ss: command not found (iproute2 is not installed, or not on PATH)",
            "iproute2",
            "sudo apt install iproute2",
        ),
    ],
)
def test_a_missing_tool_names_its_package_and_install_command(
    command: str, stderr: str, reason: str, missing: str, fix: str
) -> None:
    gap = could_not_run(_run(command, 127, stderr))
    assert gap is not None
    assert (gap.reason, gap.nodes, gap.missing, gap.fix) == (reason, ("spark-2",), missing, fix)


def test_mpirun_that_cannot_find_the_binary_names_nccl_tests() -> None:
    # Open MPI's help-orterun.txt "orterun:executable-not-found": the lines that name the binary.
    stderr = (
        "mpirun was unable to find the specified executable file, and therefore\n"
        "did not launch the job.\n"
        "Node:       spark-1\n"
        "Executable: all_reduce_perf\n"
    )
    gap = could_not_run(_run("mpirun -np 2 all_reduce_perf", 1, stderr))
    assert gap is not None and gap.missing == "nccl-tests"
    assert "make MPI=1" in (gap.fix or "")


def test_refused_sudo_gives_the_sudoers_line_for_exactly_ethtool_m() -> None:
    stderr = "sudo: a password is required\n"
    gap = could_not_run(_run("ethtool -m enp1s0f0np0", 1, stderr))
    assert gap is not None
    assert gap.reason == "spark-2: `sudo -n ethtool -m` was refused: sudo asks for a password"
    assert (gap.missing, gap.fix) == ("sudo ethtool -m", SUDO_ETHTOOL_FIX)


def test_a_lost_connection_is_ssh_and_a_run_that_ran_is_judged_on_its_output() -> None:
    lost = _run("ib_write_bw", 255, transport_error="spark-2: ssh: connection lost during 'x'")
    gap = could_not_run(lost)
    assert gap is not None and (gap.reason, gap.missing) == (lost.transport_error, "ssh")
    assert could_not_run(_run("ib_write_bw", 1, "Couldn't connect to 10.0.0.2:18515\n")) is None
    assert could_not_run(_run("sleep 99", 124, timed_out=True)) is None
    assert could_not_run(None) is None
    # A tool nobody listed still says what to do.
    assert prereq_of("/opt/x/bin/frobnicate").fix == "install frobnicate on the node, or fix PATH"


def test_a_rank_without_libnccl_names_nccl_and_the_library_path() -> None:
    stderr = (
        "/home/nvidia/nccl-tests/build/all_reduce_perf: error while loading shared libraries: "
        "libnccl.so.2: cannot open shared object file: No such file or directory\n"
    )
    gap = could_not_run(_run("mpirun -np 2 ~/nccl-tests/build/all_reduce_perf", 127, stderr))
    assert gap is not None and gap.missing == "NCCL"
    assert gap.reason == (
        "spark-2: libnccl.so.2 not found by the loader (NCCL is not built, or not on the ranks' "
        "LD_LIBRARY_PATH)"
    )
    assert "LD_LIBRARY_PATH=$HOME/nccl/build/lib" in (gap.fix or "")
