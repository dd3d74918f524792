"""What one simulated tool call in the lab costs in CPU: every hardware-only command pays it.

    python bench/sim_call.py

Starts the lab's resident simulator (lab/resident.py, `--no-delay`) on the demo cluster and runs
a mix of the suite's commands the way a lab node's wrapper does: the real supervisor
(`python -S sparkfabric_lab/supervise.py`) around the client (`python -S
sparkfabric_lab/toolcall.py`). CPU per call = the supervisor's and the client's (wait4) plus the
resident's share (its /proc/PID/stat utime + stime before and after). Prints the median against
the goal of 0.1 s and exits 1 above it. CPU seconds, not real ones: the figure holds on a machine
shared with other work.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 0.1
COMMANDS = [
    ["ethtool", "-S", "enp1s0f1np1"],
    ["ethtool", "enp1s0f1np1"],
    ["ibdev2netdev"],
    ["mlnx_qos", "-i", "enp1s0f1np1"],
    ["nvidia-smi", "--query-gpu=temperature.gpu", "--format=csv,noheader"],
]
CALLS = 4
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime (proc(5) 14, 15)


def _call_cpu(argv: list[str], env: dict[str, str]) -> float:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[-3:]}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "lab.json").write_text("{}")
        sock = str(Path(tmp) / "sim.sock")
        resident = subprocess.Popen(
            [py, "-m", "sparkfabric_lab.resident", "--no-delay", "--cluster",
             str(ROOT / "examples" / "demo.yaml"), "--socket", sock, "--lab-dir", tmp],
            env=env, stdout=subprocess.PIPE,
        )  # fmt: skip
        assert resident.stdout is not None
        resident.stdout.readline()  # listening
        lab = ROOT / "sparkfabric_lab"
        wrapper = [py, "-S", str(lab / "supervise.py"), "--", py, "-S", str(lab / "toolcall.py"),
                   sock, "spark-1", "--"]  # fmt: skip
        _call_cpu(wrapper + COMMANDS[0], env)  # the resident's first call builds its caches
        costs, shares = [], []
        for _ in range(CALLS):
            for command in COMMANDS:
                before = _proc_cpu(resident.pid)
                client = _call_cpu(wrapper + command, env)
                share = _proc_cpu(resident.pid) - before
                costs.append(client + share)
                shares.append(share)
        resident.terminate()
        resident.wait(timeout=10)
    median = sorted(costs)[len(costs) // 2]
    print(
        f"lab tool call: {median:.3f} s CPU (median of {len(costs)}; the resident's share "
        f"{sum(shares) / len(shares):.3f} s on average); goal <= {GOAL_S} s: ratio "
        f"{median / GOAL_S:.2f}"
    )
    return 0 if median <= GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
