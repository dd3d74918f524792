"""gpu-burn's arguments as gpu-burn reads them (wilicc/gpu-burn gpu_burn-drv.cpp: decodeUSEMEM,
the main argument loop, initBuffers): `-m N` is megabytes, `-m N%` percent of free memory; the
load and heat it puts on the GPU while it runs."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes.gpu_burn import parse_gpu_burn
from pytest_sparkfabric.probes.nvidia_smi import GpuSample, build_gpu_query, parse_gpu_query
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.tools.gpu import decode_usemem, parse_burn_args
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import out, run, sim

MIB = 1024 * 1024


def test_memory_and_run_length_are_read_as_gpu_burn_reads_them() -> None:
    decoded = {"80%": -80, "80": 80 * MIB, "4096": 4096 * MIB, " 50%": -50}
    for text in ("80%", "80", "4096", "80%x", "80x", "abc", "", " 50%"):
        assert decode_usemem(text) == decoded.get(text, 0), text
    # the run length is the first token after the options
    assert parse_burn_args(["gpu_burn", "-m", "80%", "600"]).seconds == 600
    assert parse_burn_args(["gpu_burn", "-m80%", "-tc", "60"]).seconds == 60
    assert parse_burn_args(["gpu_burn", "-m", "80%"]).seconds == 10
    # `-tc` after the length is read as the length: atoi("-tc") is 0.
    assert parse_burn_args(["gpu_burn", "60", "-tc"]).seconds == 0


def _gpu(t: SimTransport) -> GpuSample:
    (gpu,) = parse_gpu_query(out(t, "spark-1", build_gpu_query()))
    return gpu


def test_megabytes_too_few_for_three_matrices_abort_and_never_load_the_gpu() -> None:
    t = sim()
    bg = t.start(Job("spark-1", "gpu_burn -m 80 600", 700))
    out(t, "spark-1", "sleep 10")
    assert bg.done()
    r = bg.wait()
    assert r.rc == 123 and r.duration_s < 10
    burn = parse_gpu_burn(r.stdout)
    assert burn.aborted and burn.died and not burn.all_ok
    assert burn.last_line == "No clients are alive!  Aborting"
    assert burn.initialized[0].used_mb == 80
    assert _gpu(t).utilization_pct == 0


def test_percent_loads_and_heats_the_gpu_for_the_run_length_or_until_stopped() -> None:
    t = sim()
    bg = t.start(Job("spark-1", "gpu_burn -m 80% 600", 700))
    out(t, "spark-1", "sleep 120", 200)
    gpu = _gpu(t)
    assert not bg.done() and gpu.utilization_pct is not None and gpu.utilization_pct >= 96
    assert gpu.temp_c is not None and gpu.temp_c >= 75
    r = bg.wait()
    assert (r.rc, r.duration_s) == (0, 600)
    burn = parse_gpu_burn(r.stdout)
    assert burn.all_ok and burn.initialized[0].used_mb == 95_200  # 80% of 119000 MB free
    out(t, "spark-1", "sleep 400", 500)
    cooled = _gpu(t).temp_c
    assert cooled is not None and cooled <= 43
    assert t.start(Job("spark-1", "gpu_burn 600", 700)).stop().rc == 143


@pytest.mark.parametrize("argv", ["gpu_burn -m 80%x 60", "gpu_burn -m abc 60", "gpu_burn 60 -m"])
def test_bad_memory_argument_is_a_syntax_error(argv: str) -> None:
    r = run(sim(), "spark-1", argv)
    assert r.rc == 22 and "Syntax error near -m" in r.stderr and r.stdout == ""
