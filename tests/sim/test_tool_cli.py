"""`python -m sparkfabric_sim.tool`: one simulated command on wall-clock time."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sparkfabric_sim import tool
from tests.sim.conftest import EXAMPLES

CLUSTER = str(EXAMPLES / "direct-2.yaml")


def run(state: Path, node: str, *argv: str) -> int:
    return tool.main(
        ["--cluster", CLUSTER, "--node", node, "--state", str(state), "--no-delay", "--", *argv]
    )


def test_prints_the_output_and_exits_with_the_status(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkfabric_sim.tool",
            "--cluster",
            CLUSTER,
            "--node",
            "spark-2",
            "--state",
            str(state),
            "--",
            "ip",
            "-j",
            "addr",
            "show",
            "dev",
            "enp1s0f1np1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout)[0]["addr_info"][0]["local"] == "192.168.100.12"
    assert "start" in json.loads(state.read_text())
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkfabric_sim.tool",
            "--cluster",
            CLUSTER,
            "--node",
            "spark-2",
            "--state",
            str(state),
            "--",
            "cat",
            "/nope",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "No such file" in proc.stderr


def test_gpu_load_is_kept_in_the_state_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.json"
    assert run(state, "spark-1", "gpu_burn", "-m", "80%", "600") == 0
    loads = json.loads(state.read_text())["loads"]["spark-1"]
    assert len(loads) == 1 and loads[0][1] - loads[0][0] == 600


def test_a_server_in_one_call_is_answered_by_a_client_in_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.json"
    server_rc: list[int] = []
    server = threading.Thread(
        target=lambda: server_rc.append(
            run(
                state,
                "spark-2",
                "ib_write_bw",
                "-d",
                "rocep1s0f1",
                "-F",
                "--report_gbits",
                "-D",
                "1",
            )
        )
    )
    server.start()
    for _ in range(100):
        if state.exists() and json.loads(state.read_text() or "{}").get("servers"):
            break
        threading.Event().wait(0.05)
    assert (
        run(
            state,
            "spark-1",
            "ib_write_bw",
            "-d",
            "rocep1s0f1",
            "-F",
            "--report_gbits",
            "-D",
            "1",
            "192.168.100.12",
        )
        == 0
    )
    server.join(timeout=30)
    assert server_rc == [0]
    printed = capsys.readouterr().out
    assert printed.count("#bytes") == 2 and printed.count("Waiting for client") == 1
