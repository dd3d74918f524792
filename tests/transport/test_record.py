"""Recording and replaying a session: exact command matching, order, virtual time, clear misses;
files private, never written through a symbolic link, never left with half a line; damaged
recordings named by file and line."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_sparkfabric.cluster.spec import SwitchSpec
from pytest_sparkfabric.transport import Job, RunResult, Transport, VirtualClock
from pytest_sparkfabric.transport.base import Background, Finished
from pytest_sparkfabric.transport.record import (
    SWITCH_RECORDING,
    Recording,
    RecordingError,
    RecordingTransport,
    ReplayTransport,
    holds_recording,
)
from pytest_sparkfabric.transport.rest import SwitchError, SwitchUnreachable
from tests.transport.conftest import tiny_tmpfs


class Echo(Transport):
    """Answers `echo X` with X and a call count; a background job ends after `polls` polls. Its
    switch answers with what was asked; `/gone` and `/bad` fail."""

    def __init__(self, polls: int = 0, out: str = "") -> None:
        self.clock = VirtualClock()
        self.calls, self.polls, self.out = 0, polls, out

    def run(self, job: Job) -> RunResult:
        self.calls += 1
        word = self.out or f"{job.command.removeprefix('echo ')} #{self.calls}\n"
        return RunResult(job.node, job.command, 0, word, "", 1.5)

    def start(self, job: Job) -> Background:
        return Finished(job, self.run(job), self.polls)

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> Any:
        return self

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> Any:
        return SimpleNamespace(run=lambda command: f"ran {command}\n")

    def get(self, path: str) -> Any:
        if path in ("/gone", "/bad"):
            error = SwitchUnreachable if path == "/gone" else SwitchError
            raise error({"/gone": "GET /gone: connection refused"}.get(path, "GET /bad: HTTP 400"))
        return [{"path": path}]

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return [{"path": path, **body}]


SPEC = SwitchSpec(host="192.168.88.1", user="ro")


def test_record_then_replay_gives_the_same_answers_in_virtual_time(tmp_path: Path) -> None:
    rec = RecordingTransport(Echo(), tmp_path)
    first = [rec.run(Job("a", "echo x", 5)), rec.run(Job("a", "echo x", 5))]
    many = rec.run_many([Job("b", "echo y", 5), Job("a", "echo z", 5)])
    bg = rec.start(Job("b", "echo srv", 5)).wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]

    replay = ReplayTransport(Recording(tmp_path))
    again = [replay.run(Job("a", "echo x", 5)) for _ in range(3)]
    # In recorded order; the last answer repeats once they run out (a longer soak).
    assert [r.stdout for r in again] == [r.stdout for r in first] + [first[1].stdout]
    assert replay.clock.now() == 4.5
    replayed = replay.run_many([Job("b", "echo y", 5), Job("a", "echo z", 5)])
    assert [r.stdout for r in replayed] == [r.stdout for r in many]
    assert replay.clock.now() == 6.0  # concurrent jobs overlap
    assert replay.start(Job("b", "echo srv", 5)).wait().stdout == bg.stdout
    miss = replay.run(Job("a", "ethtool enp1s0f1np1", 5))
    assert not miss.ok and miss.transport_error == (
        f"a: replay: no recording of `ethtool enp1s0f1np1` in {tmp_path / 'a.jsonl'}"
    )
    # A background job's done() replays as the recording saw it.
    rec = RecordingTransport(Echo(polls=2), tmp_path / "polls")
    ends = rec.start(Job("a", "echo ends", 5))
    assert [ends.done() for _ in range(4)] == [False, False, True, True]
    ends.stop()
    rec.start(Job("a", "echo runs", 5)).stop()  # never asked: it ran until stopped
    replay = ReplayTransport(Recording(tmp_path / "polls"))
    ended = replay.start(Job("a", "echo ends", 5))
    assert [ended.done() for _ in range(4)] == [False, False, True, True]
    assert [replay.start(Job("a", "echo runs", 5)).done() for _ in range(2)] == [False, False]


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


def test_recordings_are_private_and_capped(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "rec"
    rec = RecordingTransport(Echo(out="y" * 5000), folder, output_cap_bytes=1000)
    rec.run(Job("a", "loud", 5))
    rec.switch_console(SPEC).run("/system resource print")
    assert _mode(folder) == _mode(folder / "switch") == 0o700
    assert _mode(folder / "a.jsonl") == _mode(folder / "switch" / "ssh.jsonl") == 0o600
    (line,) = (folder / "a.jsonl").read_text().splitlines()
    stdout = json.loads(line)["stdout"]
    assert stdout.startswith("y" * 500 + "\n[sparkfabric: 4000 bytes of output dropped here")
    assert stdout.endswith("]\n" + "y" * 500)


def test_switch_calls_record_and_replay_errors_and_misses_included(tmp_path: Path) -> None:
    rec = RecordingTransport(Echo(), tmp_path)
    assert not holds_recording(tmp_path)

    def calls(t: Transport) -> list[Any]:
        client = t.switch_client(SPEC)
        return [client.get("/a"), client.post("/m", {"once": ""}), t.switch_console(SPEC).run("p")]

    first = calls(rec)
    for bad in ("/gone", "/bad"):
        with pytest.raises(SwitchError):
            rec.switch_client(SPEC).get(bad)
    assert holds_recording(tmp_path)  # a switch recording alone makes the folder used
    path = tmp_path / SWITCH_RECORDING
    assert (
        path.read_text().splitlines()[0]
        == '{"key":"[\\"GET\\", \\"/a\\", null]","reply":[{"path":"/a"}]}'
    )
    replay = ReplayTransport(Recording(tmp_path))
    assert calls(replay) == first
    for bad, error, says in [
        ("/gone", SwitchUnreachable, "GET /gone: connection refused"),
        ("/bad", SwitchError, "GET /bad: HTTP 400"),
        ("/never", SwitchUnreachable, f"replay: no recording of GET /never in {path}"),
    ]:
        with pytest.raises(error) as err:
            replay.switch_client(SPEC).get(bad)
        assert type(err.value) is error and str(err.value) == says
    with pytest.raises(SwitchUnreachable) as err:
        replay.switch_console(SPEC).run("/x print")
    assert str(err.value) == f"replay: no recording of `/x print` in {tmp_path}/switch/ssh.jsonl"


GOOD = '{"command": "echo x", "rc": 0, "stdout": "x\\n", "stderr": "", "duration_s": 0.1}\n'
FOLDER, LINK = "<a folder>", "<a symbolic link>"


@pytest.mark.parametrize(
    ("name", "content", "line", "what"),
    [
        ("spark-1.jsonl", GOOD + GOOD[:40], 2,
         "not valid JSON (EOF while parsing a value at column 40); the line is cut short (an "
         "unfinished run?)"),
        ("spark-1.jsonl", GOOD + "garbage\n", 2, "not valid JSON (expected value at column 1)"),
        ("spark-1.jsonl", "[1, 2]\n", 1, "not a JSON object (list)"),
        ("spark-1.jsonl", GOOD.replace('"rc": 0', '"rc": "0"'), 1,
         "'rc': input should be a valid integer (got '0')"),
        ("spark-1.jsonl", GOOD.replace('"rc": 0', '"rc": true'), 1,
         "'rc': input should be a valid integer (got True)"),
        ("spark-1.jsonl", GOOD.replace('"duration_s": 0.1', '"duration_s": -1'), 1,
         "'duration_s': input should be greater than or equal to 0 (got -1)"),
        ("spark-1.jsonl", GOOD.replace('"stdout": "x\\n", ', ""), 1, "no 'stdout' field"),
        ("spark-1.jsonl", "\n" + GOOD.replace("echo x", "echo \udcff"), 2,
         "not valid JSON (invalid unicode code point at column 19)"),
        ("spark-1.jsonl", GOOD.replace("}", ', "x": ' + "[" * 300 + "]" * 300 + "}"), 1,
         "not valid JSON (recursion limit exceeded at column 287)"),
        (SWITCH_RECORDING, '{"key": 1}\n', 1, "'key': input should be a valid string (got 1)"),
        ("switch/ssh.jsonl", '{"key": "/system resource print", "reply": [1]}\n', 1,
         "'reply': input should be a valid string (got [1])"),
        ("spark-1.jsonl", FOLDER, None, "a folder, not a recording file"),
        ("spark-1.jsonl", LINK, None, "cannot be read (a symbolic link, not followed)"),
        (SWITCH_RECORDING, LINK, None, "cannot be read (a symbolic link, not followed)"),
    ],
)  # fmt: skip
def test_a_damaged_recording_names_file_and_line(
    tmp_path: Path, name: str, content: str, line: int | None, what: str
) -> None:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    if content == FOLDER:
        path.mkdir()
    elif content == LINK:
        (tmp_path / "elsewhere.txt").write_text(GOOD)
        path.symlink_to(tmp_path / "elsewhere.txt")
    else:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(RecordingError) as err:
        Recording(tmp_path)
    assert str(err.value) == (
        f"{path}{'' if line is None else f':{line}'}: {what}.\n"
        "    Fix: record again with --sparkfabric-record DIR, or repair or delete that line"
    )


@pytest.mark.parametrize(
    ("link", "failed"), [("a.jsonl", "a.jsonl"), ("switch", "switch/ssh.jsonl")]
)
def test_a_planted_link_is_not_written_through(tmp_path: Path, link: str, failed: str) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / link).symlink_to(target / link if link == "a.jsonl" else target)
    rec = RecordingTransport(Echo(), tmp_path / "rec")
    with pytest.warns(RuntimeWarning) as warned:
        rec.switch_console(SPEC).run("p")
        rec.run(Job("a", "echo x", 5))
        rec.run(Job("a", "echo y", 5))
    (message,) = [str(w.message) for w in warned]
    assert message.startswith(f"sparkfabric: recording stopped: {tmp_path / 'rec' / failed}: ")
    assert list(target.iterdir()) == []


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    yield from tiny_tmpfs(tmp_path / "disk")


def test_a_full_disk_stops_the_recording_once_with_whole_lines(tiny_disk: Path) -> None:
    rec = RecordingTransport(Echo(out="z" * 3000), tiny_disk / "rec")
    with pytest.warns(RuntimeWarning) as warned:
        for n in range(60):  # 180 kB into 64 kB
            assert rec.run(Job("a", f"echo {n}", 5)).ok
    assert [str(w.message) for w in warned] == [
        f"sparkfabric: recording stopped: {tiny_disk / 'rec' / 'a.jsonl'}: No space left on "
        "device; its lines so far are whole and replay, nothing later was recorded. Fix: "
        "record into a new folder on a disk with room (--sparkfabric-record DIR)"
    ]
    Recording(tiny_disk / "rec")
    assert 10 < len((tiny_disk / "rec" / "a.jsonl").read_text().splitlines()) < 60
