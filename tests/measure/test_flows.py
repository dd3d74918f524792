"""Servers start under a deadline, are waited for on the clock, and always end. A node whose `ss`
is missing is not polled on (as an unreachable one, below): test_prereq pins its words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from pytest_sparkfabric.measure.flows import LISTEN_WAIT_S, Flow, run_flows, wait_listening
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.transport import Job, RunResult, Transport, VirtualClock


class FakeBackground:
    def __init__(self, transport: FakeTransport, job: Job) -> None:
        self.job = job
        self.transport = transport
        self.stopped = False

    def done(self) -> bool:
        return self.transport.server_exits

    def wait(self) -> RunResult:
        return replace(self.stop(), stdout="waited")

    def stop(self) -> RunResult:
        self.stopped = True
        return RunResult(self.job.node, self.job.command, 0, "", "server bye", 0.0)


class FakeTransport(Transport):
    def __init__(self, *, listens: bool = True, down: bool = False) -> None:
        self.vclock = VirtualClock()
        self.clock = self.vclock
        self.listens = listens
        self.started: list[FakeBackground] = []
        self.ran: list[Job] = []
        self.on_client: Callable[[Job], RunResult] | None = None
        self.server_exits = False
        self.down = down
        self.refuses: str | None = None

    def run(self, job: Job) -> RunResult:
        self.ran.append(job)
        if self.down:
            err = f"{job.node}: ssh: refused"
            return RunResult(job.node, job.command, 255, "", "", 0.0, transport_error=err)
        if job.command.startswith("ss "):
            self.vclock.advance(0.01)
            out = "LISTEN 0 5 *:18515 *:*\n" if self.listens else ""
            return RunResult(job.node, job.command, 0, out, "", 0.01)
        if self.on_client is not None:
            return self.on_client(job)
        return RunResult(job.node, job.command, 0, "client ok", "", 1.0)

    def start(self, job: Job) -> FakeBackground:
        assert job.timeout_s > 0
        if self.refuses is not None:
            raise OSError(self.refuses)
        bg = FakeBackground(self, job)
        self.started.append(bg)
        return bg


def flow(key: str = "f") -> Flow:
    return Flow(key, Job("b", "server", 60), Job("a", "client", 40), 18515)


@pytest.mark.parametrize(("early", "said"), [(None, "client ok"), (False, "waited"), (True, "")])
def test_clients_run_once_servers_listen_and_servers_end(early: bool | None, said: str) -> None:
    """At once, or in the background while `during` runs: waited for, or stopped if it says so."""
    t = FakeTransport()
    out = run_flows(t, [flow("x"), flow("y")], during=None if early is None else lambda: early)
    assert all(r.client is not None and r.client.stdout == said for r in out.values())
    assert all(bg.stopped for bg in t.started) and len(t.started) == (2 if early is None else 4)


def test_server_that_never_listens_is_given_up_on_the_clock() -> None:
    t = FakeTransport(listens=False)
    out = run_flows(t, [flow()])
    r = out["f"]
    assert r.client is None
    assert r.error is not None and "did not listen on TCP port 18515" in r.error
    assert "server bye" in r.error  # the server's last words
    assert LISTEN_WAIT_S <= t.clock.now() < LISTEN_WAIT_S + 2
    assert not any(j.command == "client" for j in t.ran)
    assert all(bg.stopped for bg in t.started)


def test_servers_end_even_when_the_client_blows_up() -> None:
    t = FakeTransport()

    def boom(job: Job) -> RunResult:
        raise KeyboardInterrupt

    t.on_client = boom
    with pytest.raises(KeyboardInterrupt):
        run_flows(t, [flow()])
    assert t.started and all(bg.stopped for bg in t.started)


def test_an_unreachable_server_node_is_not_polled_until_the_limit() -> None:
    t = FakeTransport(down=True)
    why = wait_listening(t, {("n", 18515): t.start(Job("n", "server", 60))})[("n", 18515)]
    assert isinstance(why, NotMeasured) and (why.reason, why.missing) == ("n: ssh: refused", "ssh")
    assert len(t.ran) == 1 and t.clock.now() == 0.0


def test_a_server_that_exits_at_once_fails_its_flow_at_once() -> None:
    t = FakeTransport(listens=False)
    t.server_exits = True
    r = run_flows(t, [flow()])["f"]
    assert r.client is None
    assert r.error == (
        "b: the server exited (rc 0) before it listened on TCP port 18515; "
        "the server said: server bye"
    )
    assert t.clock.now() < 1  # one poll, not LISTEN_WAIT_S of them


def test_a_server_the_transport_cannot_start_fails_its_flow_with_the_transports_words() -> None:
    t = FakeTransport()
    t.refuses = "no free session"
    out = run_flows(t, [flow("x")])
    assert out["x"].error == "b: could not start `server`: no free session"
    assert out["x"].client is None and not any(j.command == "client" for j in t.ran)
