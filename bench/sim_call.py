"""What one simulated tool call costs in CPU: the lab's wrappers pay it on every command.

    python bench/sim_call.py [BEFORE_TREE]

Times, in a child process per tree, the lab's own entry (`python -m sparkfabric_sim.tool
--no-delay`) for a mix of the suite's commands on the demo cluster: CPU seconds per call (the
process's, from wait4), split into the fixed start-up (imports, reading cluster.yaml) and the
simulator's own work (a cold node: its file tree built, the command parsed and run). With
BEFORE_TREE (a checkout of an earlier version, e.g. /work/main) the same is measured there and
the ratio printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [
    ["ethtool", "-S", "enp1s0f1np1"],
    ["ethtool", "enp1s0f1np1"],
    ["ip", "-j", "addr"],
    ["cat", "/sys/class/infiniband/rocep1s0f1/ports/1/state"],
    ["nvidia-smi"],
]
CALLS = 3


def _cpu(argv: list[str], env: dict[str, str]) -> float:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def per_call(tree: Path) -> tuple[float, float]:
    """(CPU seconds per tool call, CPU seconds of the start-up alone) with `tree` first."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    cluster = str(tree / "examples" / "demo.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        state = str(Path(tmp) / "state.json")
        base = [sys.executable, "-m", "sparkfabric_sim.tool", "--no-delay"]
        base += ["--cluster", cluster, "--node", "spark-1", "--state", state, "--"]
        calls = [_cpu(base + c, env) for _ in range(CALLS) for c in COMMANDS]
        startup = [
            _cpu(
                [sys.executable, "-c", "import sparkfabric_sim.tool, pytest_sparkfabric.cluster"],
                env,
            )
            for _ in range(CALLS)
        ]
    return sorted(calls)[len(calls) // 2], sorted(startup)[len(startup) // 2]


def main(argv: list[str]) -> int:
    now, now_start = per_call(ROOT)
    print(
        f"this tree: {now:.3f} s CPU per call (start-up {now_start:.3f}, simulator "
        f"{now - now_start:.3f})"
    )
    if len(argv) > 1:
        before, before_start = per_call(Path(argv[1]))
        print(
            f"before ({argv[1]}): {before:.3f} s CPU per call (start-up {before_start:.3f}, "
            f"simulator {before - before_start:.3f})"
        )
        sim_before, sim_now = before - before_start, now - now_start
        sim_ratio = sim_now / sim_before if sim_before > 0 else float("nan")
        print(
            f"ratio after/before: {now / before:.2f} per call, "
            f"{sim_ratio:.2f} for the simulator's work"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
