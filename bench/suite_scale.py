"""The whole suite at scale, on the simulator: collection, a full run, and a long soak's memory.

    python bench/suite_scale.py [NODES]

- collection of a NODES-node switch cluster (default 64) from `sparkfabric init`: real seconds
  (goal <= 2 s on the machine it runs on);
- the whole suite minus the soak on it: real seconds (goal <= 60 s), and CPU seconds, which
  stay the same on a machine shared with other work;
- peak RSS of a 60-minute simulated soak on 8 nodes (examples/switch-8.yaml, soak.duration_s
  3600): goal <= 200 MB.
Each runs `pytest` in a child process; CPU and peak RSS come from wait4.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_sparkfabric.cluster.initgen import generate, node_names  # noqa: E402

GOALS = {"collect_s": 2.0, "suite_s": 60.0, "soak_rss_mb": 200.0}


def _pytest(args: list[str]) -> tuple[int, float, float, float]:
    """rc, real s, CPU s, peak RSS MB of one pytest child."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    start = time.perf_counter()
    proc = subprocess.Popen(argv + args, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    real = time.perf_counter() - start
    return (
        os.waitstatus_to_exitcode(status),
        real,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
    )


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 64
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / f"switch-{n}.yaml"
        big.write_text(generate("switch", node_names(str(n)), transport="sim"))
        rc, real, cpu, _ = _pytest([f"--cluster={big}", "--collect-only"])
        print(f"collection, {n} nodes: {real:.1f} s real, {cpu:.1f} s CPU (goal <= 2 s real)")
        ok &= rc == 0 and real <= GOALS["collect_s"]
        rc, real, cpu, _ = _pytest([f"--cluster={big}", "-m", "not soak"])
        print(
            f"suite minus soak, {n} nodes: {real:.1f} s real, {cpu:.1f} s CPU, "
            f"{'passed' if rc == 0 else f'exit {rc}'} (goal <= 60 s real)"
        )
        ok &= rc == 0 and real <= GOALS["suite_s"]
        data = yaml.safe_load((ROOT / "examples" / "switch-8.yaml").read_text())
        data["soak"] = {**data.get("soak", {}), "duration_s": 3600}
        soak = Path(tmp) / "soak-8.yaml"
        soak.write_text(yaml.safe_dump(data, sort_keys=False))
        rc, real, cpu, rss = _pytest([f"--cluster={soak}", "-m", "soak"])
        print(
            f"60-min simulated soak, 8 nodes: peak RSS {rss:.0f} MB (goal <= 200), "
            f"{real:.1f} s real, {'passed' if rc == 0 else f'exit {rc}'}"
        )
        ok &= rc == 0 and rss <= GOALS["soak_rss_mb"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
