"""The lab's resident simulator and its tool client, on a unix socket (no root needed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.lab.labkit import REPO, cluster_file
from tests.lab.test_plan import sim_cluster

CALL = [sys.executable, "-S", str(REPO / "sparkfabric_lab" / "toolcall.py")]
DIRECT = REPO / "examples" / "direct-2.yaml"


@dataclass
class Resident:
    proc: subprocess.Popen[bytes]
    socket: Path
    lab_json: Path

    def call(self, node: str, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CALL, str(self.socket), node, "--", *argv], capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip

    def start(self, node: str, *argv: str) -> subprocess.Popen[str]:
        return subprocess.Popen([*CALL, str(self.socket), node, "--", *argv],
                                stdout=subprocess.PIPE, text=True)  # fmt: skip

    def end(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def start_resident(tmp_path: Path, cluster: Path, *extra: str) -> Resident:
    # A deep lab dir: the socket path is longer than a unix socket address may be.
    lab = tmp_path / ("d" * 60) / ("e" * 60)
    lab.mkdir(parents=True)
    (lab / "lab.json").write_text("{}")
    sock = lab / "sim.sock"
    argv = [sys.executable, "-m", "sparkfabric_lab.resident", "--cluster", str(cluster),
            "--socket", str(sock), "--lab-dir", str(lab), *extra]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()  # printed once the socket listens
    assert line.startswith("resident simulator on"), line
    return Resident(proc, sock, lab / "lab.json")


@pytest.fixture
def resident(tmp_path: Path) -> Iterator[Resident]:
    r = start_resident(tmp_path, DIRECT)
    yield r
    r.end()


def test_a_call_prints_the_tools_output_and_exits_with_its_status(resident: Resident) -> None:
    r = resident.call("spark-2", "ip", "-j", "addr", "show", "dev", "enp1s0f1np1")
    assert r.returncode == 0
    assert json.loads(r.stdout)[0]["addr_info"][0]["local"] == "192.168.100.12"
    r = resident.call("spark-2", "cat", "/nope")
    assert r.returncode == 1 and "No such file" in r.stderr


def test_a_server_in_one_call_is_answered_by_a_client_in_another(resident: Resident) -> None:
    args = ("ib_write_bw", "-d", "rocep1s0f1", "-F", "--report_gbits", "-D", "1")
    server = resident.start("spark-2", *args)
    assert server.stdout is not None
    banner = ""
    while "Waiting for client" not in banner:
        banner += server.stdout.readline()  # the banner comes before any client ran
    client = resident.call("spark-1", *args, "192.168.100.12")
    assert client.returncode == 0 and "#bytes" in client.stdout
    rest, _ = server.communicate(timeout=30)
    assert server.returncode == 0 and "#bytes" in rest


def test_a_killed_call_ends_its_gpu_load(resident: Resident) -> None:
    def temp() -> int:
        query = ("nvidia-smi", "--query-gpu=temperature.gpu", "--format=csv,noheader")
        return int(resident.call("spark-1", *query).stdout)

    burn = resident.start("spark-1", "gpu_burn", "-m", "80%", "600")
    time.sleep(2)
    burn.send_signal(signal.SIGTERM)
    assert burn.wait(timeout=10) == -signal.SIGTERM
    at_kill = temp()
    time.sleep(6)
    # Still loaded, the GPU would be 4-5 degrees warmer by now (tau 45 s); ended, it cools.
    assert temp() <= at_kill


def test_a_call_without_a_resident_says_what_to_do(tmp_path: Path) -> None:
    r = subprocess.run([*CALL, str(tmp_path / "sim.sock"), "spark-1", "--", "ethtool", "x"],
                       capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert r.returncode == 127
    assert "resident simulator" in r.stderr and "sparkfabric lab status" in r.stderr


def test_the_resident_ends_with_its_lab(tmp_path: Path) -> None:
    for how in ("the lab removed from under it", "`lab down`"):
        r = start_resident(tmp_path / how, DIRECT)
        if how == "`lab down`":
            os.kill(r.proc.pid, signal.SIGTERM)
        else:
            r.lab_json.unlink()
        assert r.proc.wait(timeout=10) == 0 and not r.socket.exists()


def test_simulated_tools_hear_of_an_unreachable_node(tmp_path: Path) -> None:
    """The lab starts no sshd on the node, and its simulated mpirun cannot reach it either:
    NCCL in the lab fails as it would on the cluster, instead of passing on the simulator."""
    path = cluster_file(
        tmp_path, "direct-2", faults=[{"fault": "node_unreachable", "node": "spark-2"}]
    )
    r = start_resident(tmp_path, sim_cluster(tmp_path, path), "--no-delay")
    try:
        out = r.call("spark-1", "mpirun", "--allow-run-as-root", "-np", "2", "-H",
                     "198.19.0.11:1,198.19.0.12:1", "all_reduce_perf", "-b", "1G", "-e", "1G",
                     "-g", "1")  # fmt: skip
    finally:
        r.end()
    assert out.returncode != 0, out.stdout
    assert "port 22: Connection timed out" in out.stderr
    assert "Avg bus bandwidth" not in out.stdout
