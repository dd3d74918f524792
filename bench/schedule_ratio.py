"""How close the RDMA bandwidth phase comes to its physical minimum on the simulated cluster.

    python bench/schedule_ratio.py [examples/switch-8.yaml]

Runs the loopback self-test and every node pair of the cluster once, on the transport the file
names (the simulator: virtual time), and prints the pair phase's duration on the transport clock
over rounds x per-test duration, where the per-test duration is what one ib_write_bw client
took on its own in that same run (-D plus perftest's connection set-up). 1.0 means the rounds
cost nothing beyond their tests; server start-up and the listen polls add the rest. The
acceptance criterion is a ratio within 10% (<= 1.10) on examples/switch-8.yaml.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.measure import rdma
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.transport import make_transport

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else ROOT / "examples" / "switch-8.yaml"
    cluster = load_cluster(path)
    transport = make_transport(cluster)
    fabric = Fabric(cluster, transport, progress=lambda line: print(f"  {line}"))
    wall = time.perf_counter()
    try:
        loop = rdma.loopbacks(fabric)
        run = rdma.pair_runs(fabric)
    finally:
        transport.close()
    wall = time.perf_counter() - wall
    nominal = run.schedule.duration_s
    seconds = sorted(r.seconds for rs in run.links.values() for r in rs if r.seconds)
    # One test on its own: the client's own run time (-D plus perftest's connection set-up).
    per_test = seconds[len(seconds) // 2] if seconds else float(nominal)
    steps = run.schedule.steps
    ratio = run.elapsed_s / (steps * per_test)
    failed = [r.where for rs in run.links.values() for r in rs if r.gbps is None]
    print(f"cluster: {path.name}: {cluster.topology}, {len(cluster.nodes)} nodes")
    print(
        f"pairs: {len(fabric.plan.pairs)} in {len(run.schedule.rounds)} rounds x "
        f"{steps // len(run.schedule.rounds)} direction(s); one test takes {per_test:.1f} s "
        f"(-D {nominal} plus set-up) -> {steps * per_test:.1f} s if rounds cost nothing extra"
    )
    print(f"pair phase: {run.elapsed_s:.1f} s on the transport clock (wall {wall:.2f} s)")
    print(f"  vs rounds x -D alone ({steps * nominal} s): {run.elapsed_s / (steps * nominal):.3f}")
    print(f"loopback phase: {loop.elapsed_s:.1f} s for {loop.rounds} rounds")
    if failed:
        print(f"note: {len(failed)} flows gave no result, e.g. {failed[0]}")
    print(f"ratio {ratio:.3f}")
    return 0 if ratio <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
