"""Recording and replaying a session: exact command matching, order, and clear misses."""

from __future__ import annotations

from pathlib import Path

from pytest_sparkfabric.transport import Job, RunResult, Transport, VirtualClock
from pytest_sparkfabric.transport.base import Background
from pytest_sparkfabric.transport.record import RecordingTransport, ReplayTransport


class _Echo(Transport):
    """Answers `echo X` with X and counts calls; background jobs finish at once."""

    def __init__(self) -> None:
        self.clock = VirtualClock()
        self.calls = 0

    def run(self, job: Job) -> RunResult:
        self.calls += 1
        word = job.command.removeprefix("echo ")
        return RunResult(job.node, job.command, 0, f"{word} #{self.calls}\n", "", 1.5)

    def start(self, job: Job) -> Background:
        result = self.run(job)

        class _Done:
            def __init__(self) -> None:
                self.job = job

            def done(self) -> bool:
                return True

            def wait(self) -> RunResult:
                return result

            def stop(self) -> RunResult:
                return result

        return _Done()


def test_record_then_replay_gives_the_same_answers(tmp_path: Path) -> None:
    rec = RecordingTransport(_Echo(), tmp_path)
    first = [rec.run(Job("a", "echo x", 5)), rec.run(Job("a", "echo x", 5))]
    many = rec.run_many([Job("b", "echo y", 5), Job("a", "echo z", 5)])
    bg = rec.start(Job("b", "echo srv", 5)).wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]

    replay = ReplayTransport(tmp_path)
    again = [replay.run(Job("a", "echo x", 5)), replay.run(Job("a", "echo x", 5))]
    assert [r.stdout for r in again] == [r.stdout for r in first]
    assert [r.stdout for r in replay.run_many([Job("b", "echo y", 5), Job("a", "echo z", 5)])] == [
        r.stdout for r in many
    ]
    assert replay.start(Job("b", "echo srv", 5)).wait().stdout == bg.stdout


def test_replay_repeats_the_last_answer_when_a_loop_runs_longer(tmp_path: Path) -> None:
    rec = RecordingTransport(_Echo(), tmp_path)
    rec.run(Job("a", "echo s", 5))
    replay = ReplayTransport(tmp_path)
    assert replay.run(Job("a", "echo s", 5)).stdout == replay.run(Job("a", "echo s", 5)).stdout


def test_replay_miss_names_the_command_and_node(tmp_path: Path) -> None:
    RecordingTransport(_Echo(), tmp_path).run(Job("a", "echo s", 5))
    r = ReplayTransport(tmp_path).run(Job("a", "ethtool enp1s0f1np1", 5))
    assert r.transport_error == (
        f"a: replay: no recording of `ethtool enp1s0f1np1` in {tmp_path / 'a.jsonl'}"
    )
    assert not r.ok


def test_replay_time_is_virtual_and_concurrent_jobs_overlap(tmp_path: Path) -> None:
    rec = RecordingTransport(_Echo(), tmp_path)
    rec.run_many([Job("a", "echo 1", 5), Job("b", "echo 2", 5)])
    replay = ReplayTransport(tmp_path)
    replay.run_many([Job("a", "echo 1", 5), Job("b", "echo 2", 5)])
    assert replay.clock.now() == 1.5
