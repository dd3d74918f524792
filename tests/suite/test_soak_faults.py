"""The heat soak through the shipped suite: a healthy soak never flags a lane, a GPU load that
aborts fails instead of passing by omission (issue 12). The faulty soaks (a marginal lane, no lane
counters, a hot NIC) and what they say are the fault matrix's (test_matrix.SAYS)."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

SOAK = ("test_soak.py",)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("cable", ["qsfp56", "qsfp112"])
@pytest.mark.parametrize("trickle", [3.0, 3000.0])
def test_a_healthy_soak_never_flags_a_lane(
    pytester: pytest.Pytester, seed: int, cable: str, trickle: float
) -> None:
    sim = {"seed": seed, "cable_type": cable, "lane_trickle_per_s": trickle}
    path = write_cluster(pytester.path, "direct-2.yaml", changes={"simulate": sim})
    r = run_suite(pytester, path, "-q", markers="soak", files=SOAK)
    assert len(r.outcomes) == 6
    assert not r.not_passed, {k: r.messages[k] for k in r.not_passed}


def test_gpu_burn_dash_m_80_is_80_megabytes_and_fails_the_load(pytester: pytest.Pytester) -> None:
    path = write_cluster(
        pytester.path,
        "direct-2.yaml",
        changes={"soak": {"gpu_load": "gpu_burn -m 80 {duration_s}"}},
    )
    r = run_suite(pytester, path, "-q", markers="soak", files=SOAK)
    assert r.failed == {"test_soak_load[spark-1]", "test_soak_load[spark-2]"}
    for key in r.failed:
        message = r.messages[key]
        assert "`gpu_burn -m 80 600` ended after ~2 s of the 600 s planned (exit status 123)" in (
            message
        ), message
        assert "its last line: 'No clients are alive!  Aborting'" in message
        assert "write `-m 80%`" in message


def test_a_soak_that_cannot_warm_the_nic_is_a_warning(pytester: pytest.Pytester) -> None:
    path = write_cluster(
        pytester.path, "direct-2.yaml", changes={"soak": {"duration_s": 10, "interval_s": 5}}
    )
    r = run_suite(pytester, path, "-q", markers="soak", files=SOAK)
    # Advisory: no source gives a minimum rise; a cool NIC proves less, it is no fault.
    assert not r.failed and r.ret == 0
    assert "ACCEPTED with 2 warnings" in r.stdout and "NIC warmed only 3.1 C from idle" in r.stdout


@pytest.mark.parametrize(
    ("gpu_load", "hint"),
    [
        ("gpu_burn -m 50% {duration_s}", "write `-m 50%`"),
        ("gpu_burn -m 30 {duration_s}", "reads `-m 30` as 30 MB and aborts; write `-m 30%`"),
        ("gpu_burn {duration_s}", ""),
    ],
)
def test_the_load_hint_quotes_the_configured_memory_share(gpu_load: str, hint: str) -> None:
    from pytest_sparkfabric.measure.soak import memory_note as _memory_note

    note = _memory_note(gpu_load)
    assert (hint in note) if hint else note == ""
    assert "80" not in note
