"""The simulated cluster with some answers changed: tools not installed, a slow machine."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_sparkfabric.cluster import Cluster
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.transport import Background, Job, RunResult, Transport
from sparkfabric_sim.transport import SimTransport


class OnSim(Transport):
    """The simulator; `answer` may replace what a command gave."""

    def __init__(self, cluster: Cluster) -> None:
        self.inner = SimTransport(cluster)
        self.clock = self.inner.clock

    def answer(self, job: Job, result: RunResult) -> RunResult:
        return result

    def run(self, job: Job) -> RunResult:
        return self.run_many([job])[0]

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        return [self.answer(j, r) for j, r in zip(jobs, self.inner.run_many(jobs), strict=True)]

    def start(self, job: Job) -> Background:
        return self.inner.start(job)

    def close(self) -> None:
        self.inner.close()


class Without(OnSim):
    """The simulator without `tools`: their commands end as a shell's `not found` (127)."""

    def __init__(self, cluster: Cluster, tools: set[str], answers: dict[str, str]) -> None:
        super().__init__(cluster)
        self.tools = tools
        self.answers = answers
        """What a tool the simulator does not model prints (its whole stdout, rc 0)."""

    def answer(self, job: Job, result: RunResult) -> RunResult:
        tool = job.command.split()[0]
        if tool in self.tools:
            err = f"sh: 1: {tool}: not found\n"
            return RunResult(job.node, job.command, 127, "", err, result.duration_s)
        if tool in self.answers:
            return RunResult(job.node, job.command, 0, self.answers[tool], "", result.duration_s)
        return result


def sim_fabric(cluster: Cluster) -> Fabric:
    return Fabric(cluster, SimTransport(cluster))
