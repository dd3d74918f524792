"""Record every command a session ran, and replay a session from such a recording.

A recording is a folder with one JSON-lines file per node; each line is one command with its
rc, stdout, stderr and duration. Users attach recordings to bug reports; we use them as golden runs.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_sparkfabric.transport.base import Background, Job, RunResult, Transport, VirtualClock


def _record(job: Job, r: RunResult) -> dict[str, Any]:
    return {
        "command": job.command,
        "sudo": job.sudo,
        "timeout_s": job.timeout_s,
        "rc": r.rc,
        "stdout": r.stdout,
        "stderr": r.stderr,
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

    def _keep(self, r: RunResult) -> RunResult:
        if not self._written:
            self._written = True
            self._rec.write(self.job, r)
        return r

    def wait(self) -> RunResult:
        return self._keep(self._inner.wait())

    def stop(self) -> RunResult:
        return self._keep(self._inner.stop())


class RecordingTransport(Transport):
    """Wraps any transport and appends each finished command to DIR/<node>.jsonl."""

    def __init__(self, inner: Transport, directory: Path) -> None:
        self.inner = inner
        self.clock = inner.clock
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, job: Job, r: RunResult) -> None:
        line = json.dumps(_record(job, r), sort_keys=True)
        with self._lock, (self.directory / f"{job.node}.jsonl").open("a") as fh:
            fh.write(line + "\n")

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
    def __init__(self, result: RunResult) -> None:
        self.job = Job(result.node, result.command, 1)
        self._result = result

    def wait(self) -> RunResult:
        return self._result

    def stop(self) -> RunResult:
        return self._result


class ReplayTransport(Transport):
    """Answers commands from a recording, matched by node and exact command text.

    A command recorded several times is answered in recorded order; once the recording runs out
    the last answer repeats (a soak sampled a little longer than when it was recorded).
    """

    def __init__(self, directory: Path) -> None:
        self.clock = VirtualClock()
        self.directory = directory
        self._answers: dict[tuple[str, str], deque[dict[str, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()
        if not directory.is_dir():
            raise FileNotFoundError(f"replay_dir {directory} does not exist")
        for path in sorted(directory.glob("*.jsonl")):
            node = path.stem
            for line in path.read_text().splitlines():
                if line.strip():
                    rec = json.loads(line)
                    self._answers[(node, rec["command"])].append(rec)

    def _answer(self, job: Job) -> RunResult:
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
            rec = queue.popleft() if len(queue) > 1 else queue[0]
        return RunResult(
            job.node,
            job.command,
            int(rec["rc"]),
            rec["stdout"],
            rec["stderr"],
            float(rec["duration_s"]),
            bool(rec.get("timed_out", False)),
            rec.get("transport_error"),
            self.clock.now(),
        )

    def run(self, job: Job) -> RunResult:
        r = self._answer(job)
        self.clock.sleep(r.duration_s)
        return r

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        results = [self._answer(j) for j in jobs]
        self.clock.sleep(max((r.duration_s for r in results), default=0.0))
        return results

    def start(self, job: Job) -> Background:
        return _ReplayBackground(self._answer(job))
