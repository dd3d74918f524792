"""Simulated commands on wall-clock time: what the lab's resident simulator answers with.

Virtual time is the wall time since the simulator started. Every call runs in a fresh World
built from the model and what earlier calls left behind: GPU loads (so temperatures rise across
calls) and waiting servers (so a server started by one call is answered by a client in
another). One `WallSim` serves every node of a lab, from threads, under one lock.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sparkfabric_sim.model import SimCluster
from sparkfabric_sim.outcome import Outcome
from sparkfabric_sim.state import Process
from sparkfabric_sim.world import World

POLL_S = 0.2


@dataclass
class _Server:
    node: str
    command: str
    start: float
    outcome: tuple[int, str] | None = None


@dataclass(frozen=True)
class Call:
    """One command's answer: `server` names a server that waits for its client."""

    outcome: Outcome
    start: float
    server: str | None = None


class WallSim:
    def __init__(self, model: SimCluster) -> None:
        self.model = model
        self.start = time.time()
        self.loads: dict[str, list[list[float]]] = {}
        self._servers: dict[str, _Server] = {}
        self._cond = threading.Condition()

    # The clock of the switch's REST answers too (pytest_sparkfabric.transport.base.Clock).
    def now(self) -> float:
        return time.time() - self.start

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))

    def world(self) -> World:
        with self._cond:
            world = World(self.model)
            for node, loads in self.loads.items():
                world.runtime.loads[node] = [list(x) for x in loads]
            return world

    def call(self, node: str, argv: list[str]) -> Call:
        command = shlex.join(argv)
        with self._cond:
            now = self.now()
            world = self.world()
            # This call's copies of the servers earlier calls left waiting: pid -> server key.
            replayed: dict[int, str] = {}
            for key, server in self._servers.items():
                if server.outcome is None:
                    copies: list[Process] = []
                    world.run(server.node, server.command, server.start, spawned=copies)
                    replayed.update({p.pid: key for p in copies})
            spawned: list[Process] = []
            outcome = world.run(node, command, now, spawned=spawned)
            for pid, key in replayed.items():
                done = world.runtime.procs[pid].outcome
                if done is not None:
                    self._servers[key].outcome = (done.rc, done.stdout)
                    self._cond.notify_all()
            mine = None
            for proc in spawned:
                if proc.kind == "gpu":
                    self.loads.setdefault(node, []).append([proc.start, proc.end])
                elif proc.kind.endswith("-server"):
                    mine = f"{node}:{proc.pid}:{now}"
                    self._servers[mine] = _Server(node, command, now)
        return Call(outcome, now, mine)

    def served(self, key: str, gone: Callable[[], bool]) -> tuple[int, str] | None:
        """A server's (rc, stdout) once a client's call has answered it; None when `gone()`
        (its caller ended first): then it stays waiting, as a killed server's record did."""
        with self._cond:
            while True:
                done = self._servers[key].outcome
                if done is not None:
                    del self._servers[key]
                    return done
                if gone():
                    return None
                self._cond.wait(POLL_S)

    def end_loads(self, node: str, started: float) -> None:
        """The command started at `started` on `node` was ended early: so is its GPU load."""
        with self._cond:
            now = self.now()
            for load in self.loads.get(node, []):
                if load[0] == started and load[1] > now:
                    load[1] = now
