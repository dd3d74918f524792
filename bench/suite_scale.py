"""The whole suite at scale, on the simulator: collection, a full run, and a long soak's memory.

    python bench/suite_scale.py [NODES ...]

For each NODES (default 64 and 128), a switch cluster from `sparkfabric init`:
- collection: CPU seconds (goal <= 2 s at 64 nodes, <= 4 s at 128);
- the whole suite minus the soak: CPU seconds (goal <= 14 s at 64 nodes, <= 30 s at 128);
then the peak RSS of a 60-minute simulated soak on 8 nodes (examples/switch-8.yaml,
soak.duration_s 3600): goal <= 200 MB.
Each runs `pytest` in a child process; CPU and peak RSS come from wait4. CPU seconds, never real
ones: they hold on a machine shared with other work. Every line prints its ratio to its goal;
the exit status is 1 when a ratio is above 1 (or a run fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_sparkfabric.cluster.initgen import generate, node_names  # noqa: E402

# (collection CPU s, suite minus soak CPU s) per node count; other counts scale linearly.
GOALS = {64: (2.0, 14.0), 128: (4.0, 30.0)}
SOAK_RSS_MB = 200.0


def _pytest(args: list[str]) -> tuple[int, float, float]:
    """rc, CPU s, peak RSS MB of one pytest child."""
    # Without the plugins of this project's own tests, as a user's install runs: hypothesis's
    # imports hypothesis at the end of every run (some 0.3 s of CPU).
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    argv += ["-p", "no:hypothesispytest"]
    proc = subprocess.Popen(argv + args, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return (
        os.waitstatus_to_exitcode(status),
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
    )


def _judge(what: str, rc: int, value: float, goal: float, unit: str) -> bool:
    ok = rc == 0 and value <= goal
    state = "" if rc == 0 else f", exit {rc}"
    print(f"{what}: {value:.1f} {unit} (goal <= {goal:g}): ratio {value / goal:.2f}{state}")
    return ok


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv[1:]] or [64, 128]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            collect_goal, suite_goal = GOALS.get(n, (2.0 * n / 64, 14.0 * n / 64))
            big = Path(tmp) / f"switch-{n}.yaml"
            big.write_text(generate("switch", node_names(str(n)), transport="sim"))
            rc, cpu, _ = _pytest([f"--cluster={big}", "--collect-only"])
            ok &= _judge(f"collection, {n} nodes", rc, cpu, collect_goal, "s CPU")
            rc, cpu, _ = _pytest([f"--cluster={big}", "-m", "not soak"])
            ok &= _judge(f"suite minus soak, {n} nodes", rc, cpu, suite_goal, "s CPU")
        data = yaml.safe_load((ROOT / "examples" / "switch-8.yaml").read_text())
        data["soak"] = {**data.get("soak", {}), "duration_s": 3600}
        soak = Path(tmp) / "soak-8.yaml"
        soak.write_text(yaml.safe_dump(data, sort_keys=False))
        rc, _, rss = _pytest([f"--cluster={soak}", "-m", "soak"])
        ok &= _judge("60-min simulated soak, 8 nodes, peak RSS", rc, rss, SOAK_RSS_MB, "MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
