"""Record every command a session ran, and replay a session from such a recording.

A recording is a folder with one JSON-lines file per node; each line is one command with its
rc, stdout, stderr and duration (see `recording_files` for how they are written and checked).
Users attach recordings to bug reports; we use them as golden runs.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_sparkfabric.transport.base import (
    DEFAULT_OUTPUT_CAP_BYTES,
    Background,
    Job,
    RunResult,
    Transport,
    VirtualClock,
    cap_text,
)
from pytest_sparkfabric.transport.recording_files import (
    NODE_FIELDS,
    append_line,
    make_private_dir,
    node_files,
    read_records,
)


def _record(job: Job, r: RunResult, cap_bytes: int) -> dict[str, Any]:
    return {
        "command": job.command,
        "sudo": job.sudo,
        "timeout_s": job.timeout_s,
        "rc": r.rc,
        "stdout": cap_text(r.stdout, cap_bytes),
        "stderr": cap_text(r.stderr, cap_bytes),
        "duration_s": round(r.duration_s, 3),
        "timed_out": r.timed_out,
        "transport_error": r.transport_error,
    }


class _RecordedBackground:
    def __init__(self, rec: RecordingTransport, inner: Background) -> None:
        self.job = inner.job
        self._rec = rec
        self._inner = inner
        self._written = False
        self._polls_running = 0
        self._ended_after: int | None = None

    def done(self) -> bool:
        # How many times it was still running when asked: a replay answers the same way.
        ended = self._inner.done()
        if self._ended_after is None:
            if ended:
                self._ended_after = self._polls_running
            else:
                self._polls_running += 1
        return ended

    def _keep(self, r: RunResult) -> RunResult:
        if not self._written:
            self._written = True
            self._rec.write(self.job, r, polls_running=self._ended_after)
        return r

    def wait(self) -> RunResult:
        return self._keep(self._inner.wait())

    def stop(self) -> RunResult:
        return self._keep(self._inner.stop())


class RecordingTransport(Transport):
    """Wraps any transport and appends each finished command to DIR/<node>.jsonl."""

    def __init__(
        self, inner: Transport, directory: Path, *, output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES
    ) -> None:
        self.inner = inner
        self.clock = inner.clock
        self.directory = directory
        self.output_cap_bytes = output_cap_bytes
        make_private_dir(directory)
        self._lock = threading.Lock()

    def write(self, job: Job, r: RunResult, *, polls_running: int | None = None) -> None:
        record = _record(job, r, self.output_cap_bytes)
        if polls_running is not None:
            record["polls_running"] = polls_running
        with self._lock:
            append_line(self.directory / f"{job.node}.jsonl", record)

    def run(self, job: Job) -> RunResult:
        r = self.inner.run(job)
        self.write(job, r)
        return r

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        results = self.inner.run_many(jobs)
        for job, r in zip(jobs, results, strict=True):
            self.write(job, r)
        return results

    def start(self, job: Job) -> Background:
        return _RecordedBackground(self, self.inner.start(job))

    def close(self) -> None:
        self.inner.close()


class _ReplayBackground:
    def __init__(self, result: RunResult, polls_running: int | None) -> None:
        self.job = Job(result.node, result.command, 1)
        self._result = result
        self._polls_left = polls_running

    def done(self) -> bool:
        # Recorded as never seen ending on its own: it runs until stopped.
        if self._polls_left is None:
            return False
        if self._polls_left > 0:
            self._polls_left -= 1
            return False
        return True

    def wait(self) -> RunResult:
        return self._result

    def stop(self) -> RunResult:
        return self._result


class ReplayTransport(Transport):
    """Answers commands from a recording, matched by node and exact command text.

    A command recorded several times is answered in recorded order; once the recording runs out
    the last answer repeats (a soak sampled a little longer than when it was recorded). A
    damaged file raises RecordingError (file, line, fix) here, before anything is answered.
    """

    def __init__(self, directory: Path) -> None:
        self.clock = VirtualClock()
        self.directory = directory
        self._answers: dict[tuple[str, str], deque[dict[str, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()
        if not directory.is_dir():
            raise FileNotFoundError(f"replay_dir {directory} does not exist")
        for path in node_files(directory):
            for _, rec in read_records(path, NODE_FIELDS):
                self._answers[(path.stem, rec["command"])].append(rec)

    def _take(self, job: Job) -> dict[str, Any] | RunResult:
        with self._lock:
            queue = self._answers.get((job.node, job.command))
            if not queue:
                return RunResult(
                    job.node, job.command, 255, "", "", 0.0,
                    transport_error=(
                        f"{job.node}: replay: no recording of `{job.command}` in "
                        f"{self.directory / (job.node + '.jsonl')}"
                    ),
                )  # fmt: skip
            return queue.popleft() if len(queue) > 1 else queue[0]

    def _result(self, job: Job, rec: dict[str, Any]) -> RunResult:
        return RunResult(
            job.node,
            job.command,
            rec["rc"],
            rec["stdout"],
            rec["stderr"],
            float(rec["duration_s"]),
            bool(rec.get("timed_out", False)),
            rec.get("transport_error"),
            self.clock.now(),
        )

    def _answer(self, job: Job) -> RunResult:
        rec = self._take(job)
        return rec if isinstance(rec, RunResult) else self._result(job, rec)

    def run(self, job: Job) -> RunResult:
        r = self._answer(job)
        self.clock.sleep(r.duration_s)
        return r

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        results = [self._answer(j) for j in jobs]
        self.clock.sleep(max((r.duration_s for r in results), default=0.0))
        return results

    def start(self, job: Job) -> Background:
        rec = self._take(job)
        if isinstance(rec, RunResult):
            return _ReplayBackground(rec, 0)  # a miss: nothing runs, it ended at once
        return _ReplayBackground(self._result(job, rec), rec.get("polls_running"))
