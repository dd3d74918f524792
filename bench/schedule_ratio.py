"""How close the RDMA bandwidth phase comes to its physical minimum, per schedule and size.

    python bench/schedule_ratio.py [N ...] [--kinds legs,full,stress]

For each N (default 8 16 32 64) a simulated switch cluster from `sparkfabric init`, and for each
`bandwidth.schedule`, runs the loopback self-test and the pair phase on the simulator's clock,
and prints: rounds, the phase's duration on the transport clock over rounds x one test (what one
ib_write_bw client took on its own: -D plus perftest's set-up), and the real time it took here.
Goals (issue 16): `legs` <= 3 rounds at every N, ratio <= 1.05.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_sparkfabric.cluster import parse_cluster  # noqa: E402
from pytest_sparkfabric.cluster.initgen import generate, node_names  # noqa: E402
from pytest_sparkfabric.measure import rdma  # noqa: E402
from pytest_sparkfabric.measure.engine import Fabric  # noqa: E402
from pytest_sparkfabric.transport import make_transport  # noqa: E402

GOAL_RATIO = 1.05
GOAL_LEGS_ROUNDS = 3


def cluster_text(n: int, kind: str) -> str:
    data = yaml.safe_load(generate("switch", node_names(str(n)), transport="sim"))
    data.setdefault("bandwidth", {})["schedule"] = kind
    return yaml.safe_dump(data, sort_keys=False)


def one(n: int, kind: str) -> tuple[int, float, float, bool]:
    cluster = parse_cluster(cluster_text(n, kind))
    transport = make_transport(cluster)
    fabric = Fabric(cluster, transport, progress=lambda line: None)
    wall = time.perf_counter()
    try:
        run = rdma.pair_runs(fabric)
    finally:
        transport.close()
    wall = time.perf_counter() - wall
    seconds = sorted(r.seconds for rs in run.links.values() for r in rs if r.seconds)
    per_test = seconds[len(seconds) // 2] if seconds else float(cluster.spec.bandwidth.duration_s)
    rounds = len(run.schedule.rounds)
    ratio = run.elapsed_s / (rounds * per_test) if rounds else 0.0
    ok = all(r.gbps is not None for rs in run.links.values() for r in rs)
    return rounds, ratio, wall, ok


def main(argv: list[str]) -> int:
    kinds = ["legs", "full", "stress"]
    sizes: list[int] = []
    for arg in argv[1:]:
        if arg.startswith("--kinds="):
            kinds = arg.split("=", 1)[1].split(",")
        else:
            sizes.append(int(arg))
    sizes = sizes or [8, 16, 32, 64]
    worst = 0.0
    legs_rounds = 0
    print(f"{'nodes':>5} {'schedule':>8} {'rounds':>6} {'ratio':>6} {'real s':>7}")
    for n in sizes:
        for kind in kinds:
            rounds, ratio, wall, ok = one(n, kind)
            worst = max(worst, ratio)
            if kind == "legs":
                legs_rounds = max(legs_rounds, rounds)
            note = "" if ok else "  (some flows gave no result)"
            print(f"{n:>5} {kind:>8} {rounds:>6} {ratio:>6.3f} {wall:>7.1f}{note}")
    print(
        f"worst ratio {worst:.3f} (goal <= {GOAL_RATIO}): ratio {worst / GOAL_RATIO:.2f}; legs at "
        f"most {legs_rounds} rounds (goal <= {GOAL_LEGS_ROUNDS}): ratio "
        f"{legs_rounds / GOAL_LEGS_ROUNDS:.2f}"
    )
    return 0 if worst <= GOAL_RATIO and legs_rounds <= GOAL_LEGS_ROUNDS else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
