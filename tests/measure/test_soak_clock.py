"""The soak's clock on a busy machine: readings on the interval grid, the last at the end, the
start only once the GPU load shows (simulated cluster, with rounds of reads made slow)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from pytest_sparkfabric.cluster import Cluster, parse_cluster
from pytest_sparkfabric.measure import soak
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.transport import Job, RunResult
from tests.measure.onsim import OnSim
from tests.sim.conftest import EXAMPLES


class Busy(OnSim):
    """The simulator, where every round of commands costs `extra_s` more (a loaded machine),
    and nvidia-smi shows the GPUs idle for the first `idle_polls` rounds it is asked."""

    def __init__(self, cluster: Cluster, extra_s: float, idle_polls: int = 0) -> None:
        super().__init__(cluster)
        self.extra_s = extra_s
        self.idle_polls = idle_polls
        self.gpu_polls = 0

    def run_many(self, jobs: Sequence[Job]) -> list[RunResult]:
        results = self.inner.run_many(jobs)
        self.inner.clock.advance(self.extra_s)
        if jobs and all(j.command.startswith("nvidia-smi") for j in jobs):
            self.gpu_polls += 1
            if self.gpu_polls <= self.idle_polls:
                results = [replace(r, rc=0, stdout="0, 0, 0, 0\n", stderr="") for r in results]
        return results


def _fabric(extra_s: float, idle_polls: int = 0) -> tuple[Fabric, list[str], Busy]:
    text = (EXAMPLES / "direct-2.yaml").read_text()
    cluster = parse_cluster(text + "soak: {duration_s: 6, interval_s: 3}\n")
    lines: list[str] = []
    busy = Busy(cluster, extra_s, idle_polls)
    return Fabric(cluster, busy, progress=lines.append), lines, busy


@pytest.mark.parametrize(("extra_s", "times"), [(0.0, [0, 3, 6]), (2.5, [0, 3, 6]), (4.0, [0, 6])])
def test_readings_keep_to_the_grid_and_end_on_time(extra_s: float, times: list[float]) -> None:
    fabric, lines, _ = _fabric(extra_s)
    run = soak.run(fabric)
    for rail in fabric.cluster.rails:
        ws = soak.rail_windows(fabric, rail)
        assert [round(w.end_s - run.started_s, 3) for w in ws] == times[1:]
    assert [ln for ln in lines if ln.startswith("soak ")][-1].startswith("soak 6 s of 6 s (100%), ")


def test_the_soak_starts_once_the_gpus_are_busy() -> None:
    fabric, _, busy = _fabric(0.5, idle_polls=3)
    run = soak.run(fabric)
    assert busy.gpu_polls > 3  # waited through the idle readings
    assert all(v >= soak.GPU_BUSY_PCT for v in run.gpu_util_pct.values()), run.gpu_util_pct
