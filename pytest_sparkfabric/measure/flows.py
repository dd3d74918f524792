"""Client/server measurements: each round starts its servers in the background, waits until each
listens (`ss -Hltn`, bounded), runs every ready client at once and ends every server in `finally`,
whatever happened; a server that exits before it listens fails its flow at once."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.transport import Background, Job, RunResult, Transport
from pytest_sparkfabric.transport.base import Tick

QUICK_S = 10.0
LISTEN_WAIT_S = 60.0
"""How long (transport clock) a server may take to listen before its flow is given up. A real
server listens within a second; the limit is for a machine so busy that starting a process
takes many seconds (the lab's simulated tools are Python starts), and costs only when a server
never listens at all."""
POLL_S = 0.5
SLACK_S = 30.0
"""Deadline beyond a tool's own duration: connection set-up, teardown, a slow node."""


@dataclass(frozen=True, slots=True)
class Flow:
    key: Hashable
    server: Job
    client: Job
    port: int
    """The TCP port the server listens on (on `server.node`)."""


def tool_flow(
    key: Hashable, port: int, duration_s: float, server: tuple[str, str], client: tuple[str, str]
) -> Flow:
    """A flow of a tool that runs `duration_s` ((node, command) of each end): the client's
    deadline is that plus SLACK_S, the server's (started first) also LISTEN_WAIT_S."""
    return Flow(
        key,
        Job(*server, timeout_s=duration_s + SLACK_S + LISTEN_WAIT_S),
        Job(*client, timeout_s=duration_s + SLACK_S),
        port,
    )


@dataclass(frozen=True, slots=True)
class FlowResult:
    client: RunResult | None
    server: RunResult | None
    error: str | None = None
    """Why the client never ran (server did not start or listen)."""
    unmeasured: NotMeasured | None = None
    """Why the flow could not run at all (a tool missing, a node lost): not the fabric's."""


Gap = str | NotMeasured
"""Why a server does not listen: a symptom (it exited, it never bound), or could not run."""


def gap_text(gap: Gap) -> str:
    return gap.reason if isinstance(gap, NotMeasured) else gap


def start(transport: Transport, job: Job) -> Background | str:
    """`job` started in the background, or the transport's own error as the item's line."""
    try:
        return transport.start(job)
    except Exception as exc:  # the transport's own error, kept for the item
        return f"{job.node}: could not start `{job.command}`: {exc}"


def ended(bg: Background | None) -> RunResult | None:
    """`bg` stopped (None: it never started, or cannot even be stopped: nothing left to tell)."""
    if bg is None:
        return None
    try:
        return bg.stop()
    except Exception:
        return None


def wait_listening(
    transport: Transport, servers: Mapping[tuple[str, int], Background]
) -> dict[tuple[str, int], Gap | None]:
    """(node, port) -> None once a socket listens there, else why not (after LISTEN_WAIT_S, or
    at once where its server has already exited or `ss` could not run)."""
    deadline = transport.clock.now() + LISTEN_WAIT_S
    pending = list(servers)
    why: dict[tuple[str, int], Gap | None] = {}
    while pending:
        jobs = [Job(n, shell.join(["ss", "-Hltn", f"sport = :{p}"]), QUICK_S) for n, p in pending]
        for target, r in zip(pending, transport.run_many(jobs), strict=True):
            server = servers[target]
            gap = could_not_run(r)
            if gap is not None or r.transport_error:
                # Not there, or the node cannot be reached: polling on would only add time.
                why[target] = gap or r.transport_error
            elif r.ok and r.stdout.strip():
                why[target] = None
            elif server.done():
                # A server that exited (tool missing, bad option) will never listen.
                why[target] = _exited(server, target[1])
        pending = [t for t in pending if t not in why]
        if pending and transport.clock.now() >= deadline:
            within = f"within {LISTEN_WAIT_S:g} s"
            for node, port in pending:
                why[(node, port)] = f"{node}: the server did not listen on TCP port {port} {within}"
            break
        if pending:
            transport.clock.sleep(POLL_S)
    return why


def _exited(server: Background, port: int) -> Gap:
    r = ended(server)
    if (gap := could_not_run(r)) is not None:
        return gap
    if r is not None and r.transport_error:
        return r.transport_error
    rc = f" (rc {r.rc})" if r is not None else ""
    return f"{server.job.node}: the server exited{rc} before it listened on TCP port {port}"


def run_flows(
    transport: Transport,
    flows: Sequence[Flow],
    *,
    tick: Tick | None = None,
    every_s: float = 2.0,
    during: Callable[[], bool] | None = None,
) -> dict[Hashable, FlowResult]:
    """Run every flow at once; every server and client is stopped before this returns. `tick` is
    called every `every_s` seconds while the clients run (a sample of the switch during traffic).
    With `during`, the clients run in the background while it runs (the soak's readings); True
    from it means it stopped the traffic early: the clients are stopped, not waited for."""
    started: dict[Hashable, Background] = {}
    running: dict[Hashable, Background] = {}
    clients: dict[Hashable, RunResult | None] = {}
    errors: dict[Hashable, Gap] = {}
    try:
        for f in flows:
            bg = start(transport, f.server)
            if isinstance(bg, str):
                errors[f.key] = bg
            else:
                started[f.key] = bg
        at = {(f.server.node, f.port): started[f.key] for f in flows if f.key in started}
        why = wait_listening(transport, at)
        for f in flows:
            if f.key in started and (reason := why.get((f.server.node, f.port))) is not None:
                errors[f.key] = reason
        ready = [f for f in flows if f.key in started and f.key not in errors]
        jobs, keys = [f.client for f in ready], [f.key for f in ready]
        if during is not None:
            for f in ready:
                if isinstance(bg := start(transport, f.client), str):
                    errors[f.key] = bg
                else:
                    running[f.key] = bg
            # The clients end by their own deadline; each is dropped only once waited for, so
            # a Ctrl-C mid-wait still stops the rest in `finally`.
            if not during():
                for key, bg in list(running.items()):
                    try:
                        clients[key] = bg.wait()
                    except Exception:
                        clients[key] = ended(bg)
                    del running[key]
        elif tick is not None and jobs:
            clients.update(zip(keys, transport.run_many_ticking(jobs, every_s, tick), strict=True))
        else:
            clients.update(zip(keys, transport.run_many(jobs), strict=True))
    finally:
        clients |= {key: ended(bg) for key, bg in running.items()}
        servers = {key: ended(bg) for key, bg in started.items()}
    out: dict[Hashable, FlowResult] = {}
    for f in flows:
        gap, server, client = errors.get(f.key), servers.get(f.key), clients.get(f.key)
        error = gap_text(gap) if gap is not None else None
        if error and (said := _last_words(server)):
            error = f"{error}; the server said: {said}"
        unmeasured = gap if isinstance(gap, NotMeasured) else None
        why_not = unmeasured or could_not_run(server) or could_not_run(client)
        out[f.key] = FlowResult(client, server, error, why_not)
    return out


def _last_words(r: RunResult | None) -> str:
    lines = [ln.strip() for ln in ((r.stderr or r.stdout) if r else "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""
