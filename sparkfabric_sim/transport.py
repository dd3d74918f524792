"""`transport: sim` — the simulated cluster behind the Transport interface, on a virtual clock.

`run` executes one command line at the clock's current time and advances the clock by the
command's modelled duration. `run_many` starts every job at the same instant: servers first,
then the bandwidth of all clients is shared out together, and the clock advances by the
longest job. `start` leaves a command running; its `wait` returns when it ends (a server when
its client finished, others at their own end), `stop` ends it now. `switch_client` reads the
simulated switch, never the network.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_sparkfabric.transport.base import (
    Job,
    RunResult,
    Tick,
    Transport,
    VirtualClock,
    step_through,
)
from pytest_sparkfabric.transport.rest import (
    SwitchClient,
    SwitchConsole,
    SwitchError,
    SwitchUnreachable,
    error_detail,
)
from sparkfabric_sim import bandwidth
from sparkfabric_sim.bandwidth import FlowRequest
from sparkfabric_sim.model import SimCluster
from sparkfabric_sim.outcome import Outcome
from sparkfabric_sim.processes import end_process
from sparkfabric_sim.state import ActiveFlow, Process
from sparkfabric_sim.world import IsServer, NeedRate, World

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from sparkfabric_sim.switch import SimSwitch

SSH_TIMEOUT_S = 10.0
SSH_ROUND_TRIP_S = 0.018
SIGTERM_RC = 128 + 15
TIMEOUT_RC = 124


class SimTransport(Transport):
    clock: VirtualClock

    def __init__(
        self, cluster: Cluster, *, clock: VirtualClock | None = None, rx_bits_phy: bool = False
    ) -> None:
        self.model = SimCluster.from_cluster(cluster, rx_bits_phy=rx_bits_phy)
        self.world = World(self.model)
        self.clock = clock if clock is not None else VirtualClock()
        self._lock = threading.RLock()
        self._live: list[SimBackground] = []
        self._lost: set[str] = set()
        sim = cluster.spec.simulate
        self._latency_s = sim.command_latency_ms / 1000 if sim is not None else 0.0
        self._sessions = sim.max_sessions if sim is not None else 10
        self.switch: SimSwitch | None = None
        if self.model.switch is not None:
            from sparkfabric_sim.switch import SimSwitch

            self.switch = SimSwitch(self.world, self.clock)

    def virtual_elapsed(self) -> float:
        return self.clock.now()

    # -- running ------------------------------------------------------------------------------

    def _unreachable(self, job: Job) -> RunResult | None:
        node = self.model.node(job.node)
        if node.lost_on is not None and job.node not in self._lost and _runs(job, node.lost_on):
            # node_lost: the connection drops under this command, as the ssh transport reports
            # a channel that closed after the supervisor started; then ssh cannot connect.
            self._lost.add(job.node)
            one_line = " ".join(job.command.split())
            short = one_line if len(one_line) <= 60 else one_line[:56].rstrip() + " ..."
            return RunResult(
                job.node, job.command, 255, "", "", min(SSH_TIMEOUT_S, job.timeout_s),
                transport_error=f"{job.node}: ssh: connection lost during '{short}'",
                started_at=self.clock.now(),
            )  # fmt: skip
        if not node.unreachable and job.node not in self._lost:
            return None
        return RunResult(
            job.node,
            job.command,
            255,
            "",
            "",
            min(SSH_TIMEOUT_S, job.timeout_s),
            transport_error=f"{job.node}: ssh: connection timed out after 10 s",
            started_at=self.clock.now(),
        )

    def run(self, job: Job) -> RunResult:
        return self.run_many([job])[0]

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        with self._lock:
            done, end = self._run_at(jobs)
            self.clock.advance_to(end)
            return done

    def run_many_ticking(self, jobs: Sequence[Job], every_s: float, tick: Tick) -> list[RunResult]:
        """As `run_many`; the clock then steps through the jobs' time, `tick()` at each step
        (the switch read at that moment sees the traffic then flowing)."""
        with self._lock:
            done, end = self._run_at(jobs)
        step_through(self.clock, end, every_s, tick)
        return done

    def _run_at(self, jobs: Sequence[Job]) -> tuple[list[RunResult], float]:
        """Every job at the clock's time, and when the last ends (the clock is not moved)."""
        with self._lock:
            t0 = self.clock.now()
            results: list[RunResult | None] = [self._unreachable(j) for j in jobs]
            servers: dict[int, SimBackground] = {}
            requests, pure = self._plan(jobs, results, t0, servers)
            planned: dict[str, float] = {}
            if requests:
                active = [(f.request, f.rate_gbps) for f in self.world.runtime.active_flows(t0)]
                rates = bandwidth.allocate(self.model, requests, active)
                planned = {r.key: rate for r, rate in zip(requests, rates, strict=True)}
            unchanged = True
            for i, job in enumerate(jobs):
                if results[i] is not None or i in servers:
                    continue
                spawned: list[Process] = []
                # A dry run's print is the real run's while nothing has changed the world since
                # (the jobs before it changed nothing either).
                outcome = pure.get(i) if unchanged else None
                if outcome is None:
                    unchanged = False
                    outcome = self.world.run(
                        job.node, _command(job), t0, planned=planned, spawned=spawned
                    )
                results[i] = self._finish(job, outcome, t0, spawned)
            for i, bg in servers.items():
                results[i] = bg.result(settle=True)
            done = self._latent([r for r in results if r is not None])
            return done, t0 + max((r.duration_s for r in done), default=0.0)

    def _latent(self, done: list[RunResult]) -> list[RunResult]:
        """`simulate.command_latency_ms` on every command; one node's commands past its
        `max_sessions` (sshd_config(5) MaxSessions, default 10) wait for a free session."""
        if not self._latency_s:
            return done
        seen: dict[str, int] = {}
        out = []
        for r in done:
            k = seen.get(r.node, 0)
            seen[r.node] = k + 1
            waves = k // self._sessions + 1
            out.append(replace(r, duration_s=r.duration_s + waves * self._latency_s))
        return out

    def _plan(
        self,
        jobs: Sequence[Job],
        results: list[RunResult | None],
        t0: float,
        servers: dict[int, SimBackground],
    ) -> tuple[list[FlowRequest], dict[int, Outcome]]:
        """Dry-run every job: start the servers, collect the traffic the clients would send,
        and what the jobs that change nothing print."""
        requests: dict[int, FlowRequest] = {}
        pure: dict[int, Outcome] = {}
        last = len(jobs)
        for again in (False, True):
            for i, job in enumerate(jobs):
                if results[i] is not None or i in servers or (again and i > last):
                    continue
                try:
                    outcome = self.world.dry_run(job.node, _command(job), t0)
                except IsServer:
                    if not again:
                        servers[i] = self._start_at(job, t0)
                    continue
                except NeedRate as need:
                    requests[i] = need.request
                    continue
                if outcome is not None:
                    pure[i] = outcome
            if not servers:
                break
            # Clients planned before their server was listening: plan them again. A job after
            # the last server was planned with every server of the batch listening.
            last = max(servers)
            for k in [k for k in pure if k < last]:
                del pure[k]
        return list(requests.values()), pure

    def _finish(self, job: Job, outcome: Outcome, t0: float, spawned: list[Process]) -> RunResult:
        if outcome.hang or outcome.duration_s + SSH_ROUND_TRIP_S > job.timeout_s:
            for proc in spawned:
                end_process(self.world.runtime, proc, t0 + job.timeout_s)
            return RunResult(
                job.node,
                job.command,
                TIMEOUT_RC,
                outcome.printed_by(job.timeout_s - SSH_ROUND_TRIP_S),
                "",
                job.timeout_s,
                timed_out=True,
                started_at=t0,
            )
        return RunResult(
            job.node,
            job.command,
            outcome.rc,
            outcome.stdout,
            outcome.stderr,
            outcome.duration_s + SSH_ROUND_TRIP_S,
            started_at=t0,
        )

    # -- background ---------------------------------------------------------------------------

    def start(self, job: Job) -> SimBackground:
        with self._lock:
            return self._start_at(job, self.clock.now())

    def _start_at(self, job: Job, t0: float) -> SimBackground:
        failed = self._unreachable(job)
        spawned: list[Process] = []
        first_flow = len(self.world.runtime.flows)
        outcome = None if failed else self.world.run(job.node, _command(job), t0, spawned=spawned)
        flows = self.world.runtime.flows[first_flow:]
        bg = SimBackground(self, job, t0, outcome, spawned, failed, flows)
        self._live.append(bg)
        return bg

    def close(self) -> None:
        with self._lock:
            for bg in list(self._live):
                bg.stop()
            self._live.clear()

    # -- the switch ---------------------------------------------------------------------------

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        """The simulated switch, answering as RouterOS's REST API would; nothing is sent."""
        if self.switch is None:
            raise SwitchUnreachable("the simulated cluster has no switch (no switch: section)")
        return SimSwitchClient(self.switch)

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchConsole:
        """The simulated switch's console, as an SSH session to RouterOS shows it."""
        from sparkfabric_sim.switch_console import SimSwitchConsole

        if self.switch is None:
            raise SwitchUnreachable("the simulated cluster has no switch (no switch: section)")
        return SimSwitchConsole(self.switch)


def _command(job: Job) -> str:
    """The shell text a node runs for `job`: under `sudo -n` where it needs root, as the ssh
    transport runs it (the simulated user is never root)."""
    return f"sudo -n {job.command}" if job.sudo else job.command


_SEGMENTS = re.compile(r";|\n|&&|\|\||\||\$\(|`")
# Builtins that only print or look up their arguments: `command -v ib_write_bw` runs nothing.
_NOT_RUN_BY = frozenset({"printf", "echo", "command", "type", "hash"})


def _runs(job: Job, command: str) -> bool:
    """Whether the job's shell text runs `command` (a word of it, by name or path, in a simple
    command that is not one of the builtins that only print or look up their words)."""
    return any(
        words[0] not in _NOT_RUN_BY and any(w.rsplit("/", 1)[-1] == command for w in words)
        for words in (segment.split() for segment in _SEGMENTS.split(job.command))
        if words
    )


class SimSwitchClient:
    """The simulated switch's `rest_get` / `rest_post` with the REST client's replies and errors.

    The simulated switch raises RestError (`status` and RouterOS's JSON error `body`) where the
    real API answers an HTTP error; it becomes the SwitchError RestClient would raise."""

    def __init__(self, switch: SimSwitch) -> None:
        self._switch = switch

    def get(self, path: str) -> Any:
        return self._call("GET", path, lambda: self._switch.rest_get(path))

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._call("POST", path, lambda: self._switch.rest_post(path, dict(body)))

    @staticmethod
    def _call(method: str, path: str, call: Callable[[], Any]) -> Any:
        from sparkfabric_sim.switch import RestError

        try:
            reply = call()
        except RestError as exc:
            detail = error_detail(json.dumps(exc.body).encode())
            raise SwitchError(f"{method} {path}: HTTP {exc.status} {detail}") from None
        if isinstance(reply, str):
            try:
                return json.loads(reply)
            except ValueError:
                raise SwitchError(f"{method} {path}: the reply is not JSON") from None
        return reply


class SimBackground:
    """A command left running in the simulation (see SimTransport.start)."""

    def __init__(
        self,
        transport: SimTransport,
        job: Job,
        t0: float,
        outcome: Outcome | None,
        spawned: list[Process],
        failed: RunResult | None,
        flows: list[ActiveFlow] | None = None,
    ) -> None:
        self.job = job
        self._flows = flows or []
        self._t = transport
        self._t0 = t0
        self._outcome = outcome
        self._spawned = spawned
        self._done = failed

    def _server(self) -> Process | None:
        return next((p for p in self._spawned if p.kind.endswith("-server")), None)

    def natural_end(self) -> float:
        """When the command ends on its own (a server: when its client finished)."""
        limit = self._t0 + self.job.timeout_s
        server = self._server()
        if server is not None:
            return min(server.end, limit) if server.outcome is not None else limit
        assert self._outcome is not None
        return limit if self._outcome.hang else min(self._t0 + self._outcome.duration_s, limit)

    def result(self, *, settle: bool = False) -> RunResult:
        """The result at the natural end (without moving the clock when `settle`)."""
        if self._done is not None:
            return self._done
        end = self.natural_end()
        server = self._server()
        outcome = server.outcome if server is not None and server.outcome else self._outcome
        assert outcome is not None
        timed_out = end - self._t0 >= self.job.timeout_s and (
            outcome.hang
            or outcome.duration_s > self.job.timeout_s
            or (server is not None and server.outcome is None)
        )
        rt = self._t.world.runtime
        if timed_out:
            for proc in self._spawned:
                end_process(rt, proc, end)
            self._done = RunResult(
                self.job.node,
                self.job.command,
                TIMEOUT_RC,
                (self._outcome.printed_by(self.job.timeout_s) if self._outcome else ""),
                "",
                self.job.timeout_s,
                timed_out=True,
                started_at=self._t0,
            )
        else:
            for proc in self._spawned:
                proc.finished = True
            self._done = RunResult(
                self.job.node,
                self.job.command,
                outcome.rc,
                outcome.stdout,
                outcome.stderr,
                end - self._t0,
                started_at=self._t0,
            )
        if not settle:
            self._t.clock.advance_to(end)
        return self._done

    def done(self) -> bool:
        """Whether it ended on its own by now (a server that could not start: at once)."""
        with self._t._lock:
            return self._done is not None or self.natural_end() <= self._t.clock.now()

    def wait(self) -> RunResult:
        with self._t._lock:
            result = self.result()
            self._t.clock.advance_to(self._t0 + result.duration_s)
            self._forget()
            return result

    def stop(self) -> RunResult:
        with self._t._lock:
            now = self._t.clock.now()
            if self._done is not None or self.natural_end() <= now:
                result = self.result(settle=True)
            else:
                for proc in self._spawned:
                    end_process(self._t.world.runtime, proc, now)
                for flow in self._flows:
                    flow.end = min(flow.end, now)
                partial = self._outcome.printed_by(now - self._t0) if self._outcome else ""
                self._done = result = RunResult(
                    self.job.node,
                    self.job.command,
                    SIGTERM_RC,
                    partial,
                    "",
                    now - self._t0,
                    started_at=self._t0,
                )
            self._forget()
            return result

    def _forget(self) -> None:
        if self in self._t._live:
            self._t._live.remove(self)
