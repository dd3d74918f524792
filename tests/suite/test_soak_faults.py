"""The heat soak through the shipped suite: a steady marginal lane is named before any link
drops, a healthy soak never flags a lane, a GPU load that aborts or a NIC without lane counters
fails instead of passing by omission (issue 12)."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

SOAK = ("test_soak.py",)
SPARK2 = {"test_soak_link[spark-2:rail0]", "test_soak_link[spark-2:rail1]"}


def test_a_3k_lane_fails_exactly_that_link_and_lane_before_any_drop(
    pytester: pytest.Pytester,
) -> None:
    r = run_suite(pytester, write_cluster(pytester.path, "faults/lane_degradation.yaml"), "-q")
    assert r.failed == SPARK2, {k: r.messages[k] for k in r.failed}
    for key, netdev, peer in (
        ("test_soak_link[spark-2:rail0]", "enp1s0f1np1", "spark-1:rail0"),
        ("test_soak_link[spark-2:rail1]", "enP2p1s0f1np1", "spark-1:rail1"),
    ):
        message = r.messages[key]
        assert f"spark-2 {netdev} receiving on cable spark-2:rail{key[-2]}<->{peer}" in message
        assert "lane 1 at 3,0" in message and "limit 1,000/s" in message, message
        assert "link_down_events_phy" not in message and "stopped early" not in message
        assert r.props[key]["rule"] == "marginal_cable"
        assert r.props[key]["lanes_in_use"] == "0,1"
    # Before any link drops: every link item passes, and the soak ran to its end.
    assert all(v == "passed" for k, v in r.outcomes.items() if k.startswith("test_link"))
    assert r.props["test_soak_load[spark-1]"]["soak_s"] == "600"


@pytest.mark.parametrize("seed", range(20))
def test_a_healthy_soak_never_flags_a_lane(pytester: pytest.Pytester, seed: int) -> None:
    path = write_cluster(pytester.path, "direct-2.yaml", changes={"simulate": {"seed": seed}})
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


def test_missing_lane_counters_are_not_measured(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "faults/phy_counters_missing.yaml")
    r = run_suite(pytester, path, "-q", markers="soak", files=SOAK)
    assert r.failed == SPARK2
    assert r.messages["test_soak_link[spark-2:rail0]"].startswith(
        "not measured: enp1s0f1np1 exposes no rx_err_lane_*_phy counters"
    )
    assert r.messages["test_soak_link[spark-2:rail1]"].startswith(
        "not measured: enP2p1s0f1np1 exposes no rx_err_lane_*_phy counters"
    )


def test_hot_nic_fails_the_load_item_of_that_node(pytester: pytest.Pytester) -> None:
    r = run_suite(
        pytester, write_cluster(pytester.path, "faults/hot_nic.yaml"), markers="soak", files=SOAK
    )
    assert r.failed == {"test_soak_load[spark-1]"}
    message = r.messages["test_soak_load[spark-1]"]
    assert "spark-1: NIC enp1s0f1np1 reached 11" in message and "expected <= 105 C" in message
    assert r.props["test_soak_load[spark-1]"]["rule"] == "nic_overheated"


def test_a_soak_that_cannot_warm_the_nic_proved_nothing(pytester: pytest.Pytester) -> None:
    path = write_cluster(
        pytester.path, "direct-2.yaml", changes={"soak": {"duration_s": 10, "interval_s": 5}}
    )
    r = run_suite(pytester, path, "-q", markers="soak", files=SOAK)
    assert r.failed == {"test_soak_load[spark-1]", "test_soak_load[spark-2]"}
    assert "the NIC warmed only" in r.messages["test_soak_load[spark-1]"]
