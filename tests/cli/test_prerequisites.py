"""`sparkfabric preflight CLUSTER.yaml`: what each node lacks and the commands that fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.cli.prerequisites import suite_needs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The command reads the shipped suite's marks by importing it; inside this pytest run (no
# --cluster) the suite's markers are not registered, which the command itself never meets.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")


def test_demo_cluster_has_everything(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preflight", str(EXAMPLES / "demo.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        *(f"spark-{i}: nothing missing (looked for 14 commands)" for i in range(1, 5)),
        "Nothing missing: every node has what the suite runs.",
    ]


def test_stock_cluster_lists_each_missing_prerequisite_with_its_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cluster = EXAMPLES / "stock.yaml"
    assert main(["preflight", str(cluster)]) == 10
    out = capsys.readouterr().out
    assert out.startswith(f"sparkfabric preflight: {cluster}, 2 nodes\nspark-1: 7 missing\n")
    assert (
        "  perftest: spark-1: ib_write_bw: command not found (perftest is not installed, or not "
        "on PATH); spark-1: ib_write_lat: command not found (perftest is not installed, or not "
        "on PATH)\n    Fix: sudo apt install perftest\n"
    ) in out
    assert (
        "  sudo ethtool -m (advisory: its checks only warn): spark-2: `sudo -n ethtool -m` was "
        "refused: sudo asks for a password\n"
    ) in out
    fixes = out.split("To fix (nothing was installed):\n", 1)[1].splitlines()
    assert [f.split(":", 1)[0] for f in fixes] == [
        "  perftest on spark-1, spark-2",
        "  sudo ethtool -m on spark-1, spark-2",
        "  lldpd on spark-1, spark-2",
        "  Open MPI on spark-1, spark-2",
        "  nccl-tests on spark-1, spark-2",
        "  gpu-burn on spark-1, spark-2",
        "  iperf3 on spark-1, spark-2",
    ]
    assert "  iperf3 on spark-1, spark-2: sudo apt install iperf3" in fixes


def test_a_node_that_does_not_answer_is_not_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preflight", str(EXAMPLES / "faults/node_unreachable.yaml")]) == 10
    out = capsys.readouterr().out
    assert "spark-2: not checked: spark-2: ssh: " in out
    assert "To fix" not in out


def test_config_errors_exit_4_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("topology: mesh\nnodes: []\n")
    assert main(["preflight", str(bad)]) == 4
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{bad}: ")
    assert "Traceback" not in captured.out + captured.err


def test_suite_needs_come_from_the_shipped_checks_marks() -> None:
    needs = suite_needs()
    assert {"nccl.launcher", "soak.gpu_load", "sudo ethtool -m", "ib_write_lat"} <= set(needs)
    assert len(needs) == len(set(needs))
