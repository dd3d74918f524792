"""gpu-burn's arguments as gpu-burn reads them (wilicc/gpu-burn gpu_burn-drv.cpp: decodeUSEMEM,
the main argument loop, initBuffers): `-m N` is megabytes, `-m N%` percent of free memory."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes.gpu_burn import parse_gpu_burn
from pytest_sparkfabric.probes.nvidia_smi import build_gpu_query, parse_gpu_query
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.tools.gpu import decode_usemem, parse_burn_args
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80%", -80),
        ("80", 80 * MIB),
        ("4096", 4096 * MIB),
        ("80%x", 0),
        ("80x", 0),
        ("abc", 0),
        ("", 0),
        (" 50%", -50),
    ],
)
def test_decode_usemem_as_gpu_burn(text: str, value: int) -> None:
    assert decode_usemem(text) == value


def test_run_length_is_the_first_token_after_the_options() -> None:
    assert parse_burn_args(["gpu_burn", "-m", "80%", "600"]).seconds == 600
    assert parse_burn_args(["gpu_burn", "-m80%", "-tc", "60"]).seconds == 60
    assert parse_burn_args(["gpu_burn", "-m", "80%"]).seconds == 10
    # `-tc` after the length is read as the length: atoi("-tc") is 0.
    assert parse_burn_args(["gpu_burn", "60", "-tc"]).seconds == 0


def _gpu_util(t: SimTransport, node: str) -> float:
    r = t.run(Job(node, build_gpu_query(), 10))
    return max(g.utilization_pct or 0.0 for g in parse_gpu_query(r.stdout))


def test_megabytes_too_few_for_three_matrices_abort_and_never_load_the_gpu() -> None:
    t = SimTransport(example("direct-2"))
    bg = t.start(Job("spark-1", "gpu_burn -m 80 600", 700))
    t.run(Job("spark-1", "sleep 10", 20))
    assert bg.done()
    r = bg.wait()
    assert r.rc == 123 and r.duration_s < 10
    burn = parse_gpu_burn(r.stdout)
    assert burn.aborted and burn.died and not burn.all_ok
    assert burn.last_line == "No clients are alive!  Aborting"
    assert burn.initialized[0].used_mb == 80
    assert _gpu_util(t, "spark-1") == 0


def test_percent_loads_the_gpu_for_the_run_length() -> None:
    t = SimTransport(example("direct-2"))
    bg = t.start(Job("spark-1", "gpu_burn -m 80% 600", 700))
    t.run(Job("spark-1", "sleep 30", 40))
    assert not bg.done() and _gpu_util(t, "spark-1") >= 96
    r = bg.wait()
    assert r.rc == 0
    burn = parse_gpu_burn(r.stdout)
    assert burn.all_ok and burn.initialized[0].used_mb == 95_200  # 80% of 119000 MB free


@pytest.mark.parametrize("argv", ["gpu_burn -m 80%x 60", "gpu_burn -m abc 60", "gpu_burn 60 -m"])
def test_bad_memory_argument_is_a_syntax_error(argv: str) -> None:
    t = SimTransport(example("direct-2"))
    r = t.run(Job("spark-1", argv, 30))
    assert r.rc == 22 and "Syntax error near -m" in r.stderr and r.stdout == ""
