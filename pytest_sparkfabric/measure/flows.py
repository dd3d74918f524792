"""Client/server measurements: servers started under a deadline, always ended.

A flow is one server (ib_write_bw or iperf3 without a peer) and the client that talks to it. All
flows of a round start their servers in the background, wait until each listens (`ss -Hltn`,
polled on the transport's clock, bounded), run every ready client at once, and end every server
in `finally`, whatever happened: a failed start, a timeout, an exception, Ctrl-C. A server that
exits before it listens (tool missing, bad option) fails its flow at once, not at the limit.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from pytest_sparkfabric import shell
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


def listen_check(port: int) -> shell.Command:
    return shell.join(["ss", "-Hltn", f"sport = :{port}"])


@dataclass(frozen=True, slots=True)
class Flow:
    key: Hashable
    server: Job
    client: Job
    port: int
    """The TCP port the server listens on (on `server.node`)."""


@dataclass(frozen=True, slots=True)
class FlowResult:
    client: RunResult | None
    server: RunResult | None
    error: str | None = None
    """Why the client never ran (server did not start or listen)."""


def _ended(bg: Background) -> RunResult | None:
    try:
        return bg.stop()
    except Exception:  # a server that cannot even be stopped has nothing left to tell
        return None


def wait_listening(
    transport: Transport,
    targets: Sequence[tuple[str, int]],
    *,
    limit_s: float = LISTEN_WAIT_S,
    servers: Mapping[tuple[str, int], Background] | None = None,
) -> dict[tuple[str, int], str | None]:
    """(node, port) -> None once a socket listens there, else why not (after `limit_s`, or at
    once where the server in `servers` for that target has already exited)."""
    clock = transport.clock
    deadline = clock.now() + limit_s
    pending = list(dict.fromkeys(targets))
    why: dict[tuple[str, int], str | None] = {}
    while pending:
        jobs = [Job(node, listen_check(port), QUICK_S) for node, port in pending]
        still: list[tuple[str, int]] = []
        for target, r in zip(pending, transport.run_many(jobs), strict=True):
            failure = r.failure()
            server = (servers or {}).get(target)
            if failure and r.rc == 127:
                why[target] = f"{target[0]}: ss: command not found (install iproute2)"
            elif r.transport_error:
                # The node cannot be reached: polling on until the limit would only add time.
                why[target] = r.transport_error
            elif r.ok and r.stdout.strip():
                why[target] = None
            elif server is not None and server.done():
                # A server that exited (tool missing, bad option) will never listen.
                why[target] = _exited(server, target[1])
            else:
                still.append(target)
        pending = still
        if not pending:
            break
        if clock.now() >= deadline:
            for node, port in pending:
                why[(node, port)] = (
                    f"{node}: the server did not listen on TCP port {port} within {limit_s:g} s"
                )
            break
        clock.sleep(POLL_S)
    return why


def _exited(server: Background, port: int) -> str:
    r = _ended(server)
    node = server.job.node
    failure = r.failure() if r is not None else None
    if failure and (r is None or r.transport_error or r.rc == 127):
        return failure
    rc = f" (rc {r.rc})" if r is not None else ""
    return f"{node}: the server exited{rc} before it listened on TCP port {port}"


def run_flows(
    transport: Transport,
    flows: Sequence[Flow],
    *,
    tick: Tick | None = None,
    every_s: float = 2.0,
) -> dict[Hashable, FlowResult]:
    """Run every flow at once; every server is stopped before this returns. `tick` is called
    every `every_s` seconds while the clients run (a sample of the switch during traffic)."""
    started: dict[Hashable, Background] = {}
    errors: dict[Hashable, str] = {}
    clients: dict[Hashable, RunResult] = {}
    servers: dict[Hashable, RunResult | None] = {}
    try:
        for f in flows:
            try:
                started[f.key] = transport.start(f.server)
            except Exception as exc:  # the transport's own error, kept for the item
                errors[f.key] = f"{f.server.node}: could not start `{f.server.command}`: {exc}"
        targets = [(f.server.node, f.port) for f in flows if f.key in started]
        servers_at = {(f.server.node, f.port): started[f.key] for f in flows if f.key in started}
        why = wait_listening(transport, targets, servers=servers_at)
        ready = []
        for f in flows:
            if f.key not in started:
                continue
            reason = why.get((f.server.node, f.port))
            if reason:
                errors[f.key] = reason
            else:
                ready.append(f)
        jobs = [f.client for f in ready]
        ran = (
            transport.run_many_ticking(jobs, every_s, tick)
            if tick is not None and jobs
            else transport.run_many(jobs)
        )
        for f, r in zip(ready, ran, strict=True):
            clients[f.key] = r
    finally:
        for key, bg in started.items():
            servers[key] = _ended(bg)
    out: dict[Hashable, FlowResult] = {}
    for f in flows:
        error, server = errors.get(f.key), servers.get(f.key)
        said = _last_words(server)
        if error and said:
            error = f"{error}; the server said: {said}"
        out[f.key] = FlowResult(clients.get(f.key), server, error)
    return out


def _last_words(r: RunResult | None) -> str:
    if r is None:
        return ""
    lines = [ln.strip() for ln in (r.stderr or r.stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else ""
