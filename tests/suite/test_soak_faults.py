"""The heat soak through the shipped suite: a steady marginal lane is named before any link
drops, a healthy soak never flags a lane, a GPU load that aborts or a NIC without lane counters
fails instead of passing by omission (issue 12)."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

SOAK = ("test_soak.py",)
SPARK2 = {"test_soak_link[spark-2:rail0]", "test_soak_link[spark-2:rail1]"}


def test_the_seeds_cable_fails_naming_lane_cable_and_node(pytester: pytest.Pytester) -> None:
    # QSFP56, direct, no ethtool Lanes:, lane 3 growing with temperature (DOMAIN.md §6).
    r = run_suite(pytester, write_cluster(pytester.path, "faults/lane_degradation.yaml"), "-q")
    assert r.failed == SPARK2, {k: r.messages[k] for k in r.failed}
    for key, netdev, peer in (
        ("test_soak_link[spark-2:rail0]", "enp1s0f1np1", "spark-1:rail0"),
        ("test_soak_link[spark-2:rail1]", "enP2p1s0f1np1", "spark-1:rail1"),
    ):
        message = r.messages[key]
        assert f"spark-2 {netdev} receiving on cable spark-2:rail{key[-2]}<->{peer}" in message
        assert "lane 3 at " in message and "stands alone and grew" in message, message
        assert r.props[key]["rule"] == "marginal_cable"
        assert r.props[key]["lanes_in_use"].startswith("module EEPROM 0x11 (QSFP28): SFF-8636")
    assert all(v == "passed" for k, v in r.outcomes.items() if k.startswith("test_link"))


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
    assert "spark-1: NIC enp1s0f1np1 sensor /sys/class/net/enp1s0f1np1/device/hwmon/" in message
    assert "its own limit 105 C" in message, message
    assert r.props["test_soak_load[spark-1]"]["rule"] == "nic_overheated"


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
