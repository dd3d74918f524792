"""Recording and replaying a session: exact command matching, order, and clear misses."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from pytest_sparkfabric.transport import Job, RunResult, Transport, VirtualClock
from pytest_sparkfabric.transport.base import Background
from pytest_sparkfabric.transport.record import RecordingTransport, ReplayTransport
from pytest_sparkfabric.transport.recording_files import (
    SWITCH_RECORDING,
    RecordingError,
    append_line,
    check_recording,
    holds_recording,
)


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


# -- private files, checked lines ------------------------------------------------------------

GOOD = '{"command": "echo x", "rc": 0, "stdout": "x\\n", "stderr": "", "duration_s": 0.1}\n'


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_recordings_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "rec"
    rec = RecordingTransport(_Echo(), folder)
    rec.run(Job("a", "echo x", 5))
    append_line(folder / SWITCH_RECORDING, {"key": "k", "reply": []})
    assert _mode(folder) == 0o700 and _mode(folder / "switch") == 0o700
    assert _mode(folder / "a.jsonl") == 0o600
    assert _mode(folder / SWITCH_RECORDING) == 0o600


def test_a_switch_recording_alone_makes_a_folder_used(tmp_path: Path) -> None:
    assert not holds_recording(tmp_path)
    append_line(tmp_path / SWITCH_RECORDING, {"key": "k", "reply": []})
    assert holds_recording(tmp_path)


def test_recorded_output_is_capped(tmp_path: Path) -> None:
    class Loud(_Echo):
        def run(self, job: Job) -> RunResult:
            return RunResult(job.node, job.command, 0, "y" * 5000, "", 0.1)

    RecordingTransport(Loud(), tmp_path, output_cap_bytes=1000).run(Job("a", "loud", 5))
    (line,) = (tmp_path / "a.jsonl").read_text().splitlines()
    stdout = json.loads(line)["stdout"]
    assert stdout.startswith("y" * 500 + "\n[sparkfabric: 4000 bytes of output dropped here")
    assert stdout.endswith("]\n" + "y" * 500)


@pytest.mark.parametrize(
    ("content", "line", "what"),
    [
        (GOOD + GOOD[:40], 2, "not valid JSON (Expecting value at column 41); "
         "the line is cut short (an unfinished run?)"),
        (GOOD + "garbage\n", 2, "not valid JSON (Expecting value at column 1)"),
        ("[1, 2]\n", 1, "a list, not a JSON object"),
        (GOOD.replace('"rc": 0', '"rc": "0"'), 1, "'rc' is a string (\"0\"), expected an integer"),
        (GOOD.replace('"rc": 0', '"rc": true'), 1,
         "'rc' is true/false (true), expected an integer"),
        (GOOD.replace('"duration_s": 0.1', '"duration_s": -1'), 1,
         "'duration_s' is an integer (-1), expected a number of seconds >= 0"),
        (GOOD.replace('"stdout": "x\\n", ', ""), 1, "no 'stdout' field"),
        ("\n" + GOOD.encode().replace(b"echo x", b"echo \xff").decode("latin-1"), 2,
         "not UTF-8 text (byte 0xff at column 19)"),
    ],
)  # fmt: skip
def test_a_damaged_recording_names_file_and_line(
    tmp_path: Path, content: str, line: int, what: str
) -> None:
    path = tmp_path / "spark-1.jsonl"
    path.write_bytes(content.encode("latin-1") if "\xff" in content else content.encode())
    with pytest.raises(RecordingError) as err:
        check_recording(tmp_path)
    assert str(err.value) == (
        f"{path}:{line}: {what}.\n"
        "    Fix: record again with --sparkfabric-record DIR, or repair or delete that line"
    )
    with pytest.raises(RecordingError):
        ReplayTransport(tmp_path)


def test_a_folder_named_like_a_recording_is_refused(tmp_path: Path) -> None:
    (tmp_path / "spark-1.jsonl").mkdir()
    with pytest.raises(RecordingError) as err:
        check_recording(tmp_path)
    assert str(err.value).startswith(f"{tmp_path / 'spark-1.jsonl'}: a folder, not a recording")


def test_a_damaged_switch_recording_is_refused(tmp_path: Path) -> None:
    (tmp_path / "switch").mkdir()
    (tmp_path / SWITCH_RECORDING).write_text('{"key": 1}\n')
    with pytest.raises(RecordingError) as err:
        check_recording(tmp_path)
    assert str(err.value).startswith(
        f"{tmp_path / SWITCH_RECORDING}:1: 'key' is an integer (1), expected a string."
    )


def test_replay_answers_done_as_the_recording_saw_it(tmp_path: Path) -> None:
    class Slow(_Echo):
        def start(self, job: Job) -> Background:
            result = self.run(job)

            class _Ends:
                polls = 0

                def __init__(self) -> None:
                    self.job = job

                def done(self) -> bool:
                    self.polls += 1
                    return self.polls > 2

                def wait(self) -> RunResult:
                    return result

                def stop(self) -> RunResult:
                    return result

            return _Ends()

    rec = RecordingTransport(Slow(), tmp_path)
    ends = rec.start(Job("a", "echo ends", 5))
    assert [ends.done() for _ in range(4)] == [False, False, True, True]
    ends.stop()
    runs = rec.start(Job("a", "echo runs", 5))
    runs.stop()  # never asked: it ran until stopped
    replay = ReplayTransport(tmp_path)
    again = replay.start(Job("a", "echo ends", 5))
    assert [again.done() for _ in range(4)] == [False, False, True, True]
    assert [replay.start(Job("a", "echo runs", 5)).done() for _ in range(2)] == [False, False]
