"""The engine: each phase runs once per session, concurrent callers wait for the first, what ran
can be read without running anything, and jobs of unreachable nodes fail at once."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from pytest_sparkfabric.measure.engine import REACH_COMMAND, Fabric
from pytest_sparkfabric.transport import Background, Job, RunResult, Transport, VirtualClock
from pytest_sparkfabric.transport.base import not_run
from tests.sim.conftest import example


class Echo(Transport):
    """Answers every command with its own text; `down` nodes do not answer at all."""

    def __init__(self, down: frozenset[str] = frozenset()) -> None:
        self.clock = VirtualClock()
        self.down = down
        self.sent: list[Job] = []
        self._lock = threading.Lock()

    def run(self, job: Job) -> RunResult:
        with self._lock:
            self.sent.append(job)
        if job.node in self.down:
            return not_run(job, f"{job.node}: down")
        return RunResult(job.node, job.command, 0, job.command, "", 0.0)

    def start(self, job: Job) -> Background:
        raise AssertionError("not used")


@dataclass(frozen=True)
class Counted:
    calls: int


def _fabric(transport: Transport | None = None) -> Fabric:
    return Fabric(example("direct-2"), transport or Echo())


def test_a_phase_runs_once_and_concurrent_callers_wait_for_it() -> None:
    fabric = _fabric()
    calls: list[int] = []
    started = threading.Event()

    def measure(f: Fabric) -> Counted:
        assert f is fabric
        calls.append(1)
        started.set()
        time.sleep(0.2)  # the others arrive while it runs
        return Counted(len(calls))

    got: list[Counted] = []
    threads = [
        threading.Thread(target=lambda: got.append(fabric.phase("tcp", measure))) for _ in range(5)
    ]
    threads[0].start()
    started.wait(5)
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join(5)
    assert calls == [1]
    assert got == [Counted(1)] * 5


def test_measured_reads_what_ran_and_runs_nothing_and_a_failed_phase_is_not_kept() -> None:
    fabric = _fabric()
    assert fabric.measured("tcp", Counted) is None
    fabric.phase("tcp", lambda f: Counted(7))
    assert fabric.measured("tcp", Counted) == Counted(7)
    assert fabric.measured("rdma", Counted) is None
    with pytest.raises(TypeError, match="phase tcp holds Counted, not int"):
        fabric.measured("tcp", int)
    # A phase that raises is not kept: the next caller runs it again.
    tries: list[int] = []

    def measure(f: Fabric) -> Counted:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("first try fails")
        return Counted(len(tries))

    with pytest.raises(RuntimeError):
        fabric.phase("soak", measure)
    assert fabric.measured("soak", Counted) is None
    assert fabric.phase("soak", measure) == Counted(2)


def test_jobs_of_a_node_that_does_not_answer_fail_at_once_with_its_line() -> None:
    transport = Echo(down=frozenset({"spark-2"}))
    fabric = _fabric(transport)
    results = fabric.run_all(
        [Job("spark-1", "a", 5), Job("spark-2", "b", 5), Job("spark-1", "c", 5)]
    )
    assert [r.stdout for r in results] == ["a", "", "c"]
    assert results[1].transport_error == "spark-2: down"
    # The reachability round went first, once; spark-2 got nothing after it.
    assert [(j.node, j.command) for j in transport.sent] == [
        ("spark-1", REACH_COMMAND),
        ("spark-2", REACH_COMMAND),
        ("spark-1", "a"),
        ("spark-1", "c"),
    ]
    gone = fabric.gone(["spark-1", "spark-2"])
    assert gone is not None and gone.reason == "spark-2: down"
    assert fabric.reachable() == ["spark-1"]
