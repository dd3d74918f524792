"""What the configuration phases cost on a large cluster, in round trips.

    python bench/config_phase.py [NODES] [LATENCY_MS]

A simulated switch cluster of NODES (default 64) from `sparkfabric init`, with every remote
command `simulate.command_latency_ms` (default 30) slower and at most `max_sessions` (10, sshd's
MaxSessions) at once per node. Runs each configuration phase (shell, facts, links, pings,
nccl_env, cable) once without and once with the latency, and prints what the latency added on
the transport clock over one command's latency: the round trips the phase costs (a ping's own
second is not a round trip). Goal (issue 16): <= 2 per phase, whatever NODES.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_sparkfabric.cluster import parse_cluster  # noqa: E402
from pytest_sparkfabric.cluster.initgen import generate, node_names  # noqa: E402
from pytest_sparkfabric.measure import facts, links, nccl_run, reach  # noqa: E402
from pytest_sparkfabric.measure.engine import Fabric  # noqa: E402
from pytest_sparkfabric.transport import make_transport  # noqa: E402

GOAL = 2.0


def _durations(n: int, latency_ms: int) -> dict[str, tuple[float, float]]:
    """Phase -> (transport-clock seconds, real seconds)."""
    data = yaml.safe_load(generate("switch", node_names(str(n)), transport="sim"))
    data["simulate"] = {"seed": 0, "command_latency_ms": latency_ms}
    cluster = parse_cluster(yaml.safe_dump(data, sort_keys=False))
    transport = make_transport(cluster)
    fabric = Fabric(cluster, transport, progress=lambda line: None)
    phases: list[tuple[str, Callable[[], Any]]] = [
        ("shell", fabric.unreachable),
        ("facts", lambda: fabric.phase(facts.NAME, facts.measure)),
        ("links", lambda: fabric.phase(links.NAME, links.measure)),
        ("pings", lambda: fabric.phase(reach.NAME, reach.measure)),
        ("nccl_env", lambda: fabric.phase(nccl_run.ENV, nccl_run.measure_env)),
        ("cable", lambda: fabric.phase(links.CABLE, links.measure_modules)),
    ]
    out = {}
    try:
        for name, run in phases:
            t0, wall = transport.clock.now(), time.perf_counter()
            run()
            out[name] = (transport.clock.now() - t0, time.perf_counter() - wall)
    finally:
        transport.close()
    return out


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 64
    latency_ms = int(argv[2]) if len(argv) > 2 else 30
    base = _durations(n, 0)
    slow = _durations(n, latency_ms)
    latency = latency_ms / 1000
    worst = 0.0
    print(f"{n} nodes, {latency_ms} ms per command, at most 10 at once per node")
    for name, (took, wall) in slow.items():
        ratio = (took - base[name][0]) / latency
        worst = max(worst, ratio)
        print(
            f"  {name:<9} {took:6.2f} s transport clock, latency added {ratio:5.1f} x one "
            f"command's ({wall:.1f} s real)"
        )
    print(f"worst phase {worst:.1f} round trips (goal <= {GOAL}): ratio {worst / GOAL:.2f}")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
