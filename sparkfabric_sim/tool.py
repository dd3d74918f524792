"""Run one simulated command for one node, on wall-clock time (for the netns lab).

    python -m sparkfabric_sim.tool --cluster FILE --node NAME [--state FILE] -- ARGV...

The lab puts this behind the hardware-only tools (ib_write_bw, ethtool -S, nvidia-smi,
gpu_burn, ...). Virtual time is the wall time since the start stamp in the state file (created
when missing); GPU loads and waiting servers are kept there too, so temperatures rise across
calls and a server started by one call is answered by a client in another. The process takes
as long as the modelled command and exits with its status.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from pytest_sparkfabric.cluster import load_cluster
from sparkfabric_sim.model import SimCluster
from sparkfabric_sim.state import Process
from sparkfabric_sim.world import World

POLL_S = 0.2


@contextmanager
def _locked(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        text = fh.read()
        state: dict[str, Any] = json.loads(text) if text.strip() else {}
        state.setdefault("start", time.time())
        state.setdefault("loads", {})
        state.setdefault("servers", {})
        yield state
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(state))


def _world(model: SimCluster, state: dict[str, Any]) -> World:
    world = World(model)
    for node, loads in state["loads"].items():
        world.runtime.loads[node] = [list(x) for x in loads]
    return world


def _replay_servers(world: World, state: dict[str, Any], now: float) -> dict[int, str]:
    """Start this call's copies of the servers other calls left waiting; pid -> state key."""
    keys = {}
    for key, server in state["servers"].items():
        if "outcome" in server:
            continue
        spawned: list[Process] = []
        world.run(server["node"], server["command"], server["start"], spawned=spawned)
        keys.update({p.pid: key for p in spawned})
    return keys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sparkfabric_sim.tool")
    p.add_argument("--cluster", required=True)
    p.add_argument("--node", required=True)
    p.add_argument("--state", default=".sparkfabric-sim-state.json")
    p.add_argument(
        "--no-delay", action="store_true", help="return at once instead of taking the modelled time"
    )
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    words = a.command[1:] if a.command[:1] == ["--"] else a.command
    command = shlex.join(words)
    state_path = Path(a.state)
    # Read and model the cluster before taking the lab-wide lock: the lock is held only for
    # the state's read-run-write, so calls on a busy machine overlap instead of queueing.
    model = SimCluster.from_cluster(load_cluster(a.cluster))
    with _locked(state_path) as state:
        now = time.time() - state["start"]
        world = _world(model, state)
        servers = _replay_servers(world, state, now)
        spawned: list[Process] = []
        outcome = world.run(a.node, command, now, spawned=spawned)
        for pid, key in servers.items():
            proc = world.runtime.procs[pid]
            if proc.outcome is not None:
                state["servers"][key]["outcome"] = [proc.outcome.rc, proc.outcome.stdout]
        mine = None
        for proc in spawned:
            if proc.kind == "gpu":
                state["loads"].setdefault(a.node, []).append([proc.start, proc.end])
            elif proc.kind.endswith("-server"):
                mine = f"{a.node}:{proc.pid}:{now}"
                state["servers"][mine] = {"node": a.node, "command": command, "start": now}
    if mine is not None:
        return _serve(state_path, mine, outcome.partial)
    if not a.no_delay:
        _on_term(lambda: _end_loads(state_path, a.node, now))
        time.sleep(max(0.0, outcome.duration_s))
    sys.stdout.write(outcome.stdout)
    sys.stderr.write(outcome.stderr)
    return outcome.rc


def _serve(state_path: Path, key: str, banner: str) -> int:
    """A server: wait until a client (another call) has written our outcome."""
    sys.stdout.write(banner)
    sys.stdout.flush()
    while True:
        with _locked(state_path) as state:
            server = state["servers"].get(key, {})
            if "outcome" in server:
                rc, stdout = server["outcome"]
                del state["servers"][key]
                sys.stdout.write(stdout[len(banner) :] if stdout.startswith(banner) else stdout)
                return int(rc)
        time.sleep(POLL_S)


def _end_loads(state_path: Path, node: str, started: float) -> None:
    with _locked(state_path) as state:
        now = time.time() - state["start"]
        for load in state["loads"].get(node, []):
            if load[0] == started and load[1] > now:
                load[1] = now


def _on_term(cleanup: Callable[[], None]) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        cleanup()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


if __name__ == "__main__":
    raise SystemExit(main())
