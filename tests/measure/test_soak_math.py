"""Rates over windows, pre-FEC BER, lane outliers and post-FEC growth (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric.measure.soak_math import (
    Sample,
    active_lanes,
    growth,
    has_lane_counters,
    lane_outliers,
    lanes_in_use,
    max_ber,
    max_lane_rates,
    window,
    windows,
)
from pytest_sparkfabric.probes.ethtool import EthtoolStats, parse_ethtool_stats


def stats(lanes: tuple[int, ...], *, bits: int | None = None, **extra: int) -> EthtoolStats:
    counters = {f"rx_err_lane_{i}_phy": v for i, v in enumerate(lanes)}
    counters["rx_corrected_bits_phy"] = sum(lanes)
    if bits is not None:
        counters["rx_bits_phy"] = bits
    counters.update(extra)
    return EthtoolStats(counters)


def test_rates_and_ber_from_rx_bits_phy() -> None:
    a = Sample(0.0, stats((0, 0, 0, 0), bits=0))
    b = Sample(10.0, stats((100, 200, 0, 0), bits=2_000_000_000_000))
    w = window(a, b)
    assert w.lane_rates == {0: 10.0, 1: 20.0, 2: 0.0, 3: 0.0}
    assert w.ber == pytest.approx(300 / 2e12)
    assert not w.bits_estimated


def test_bits_estimated_from_speed_when_rx_bits_phy_is_missing() -> None:
    a = Sample(0.0, stats((0, 0, 0, 0)))
    b = Sample(10.0, stats((2_000_000, 0, 0, 0)))
    w = window(a, b, speed_mbps=200_000)
    assert w.bits_estimated
    assert w.bits == pytest.approx(200e9 * 10)
    assert w.ber == pytest.approx(1e-6)
    assert window(a, b).bits == pytest.approx(200e9 * 10)  # default: the Spark's 200G


def test_judged_over_windows_not_totals() -> None:
    # A huge total from before the soak is not an error rate.
    a = Sample(0.0, stats((2913, 3011, 11_694_107, 2900)))
    b = Sample(10.0, stats((2913, 3011, 11_694_107, 2900)))
    w = window(a, b)
    assert all(r == 0 for r in w.lane_rates.values())
    assert lane_outliers([w], ratio_max=100, floor_per_s=1000) == []


def test_marginal_lane_found_against_median_of_lanes_in_use() -> None:
    s = [
        Sample(0.0, stats((0, 0, 0, 0))),
        Sample(10.0, stats((29_000, 30_000, 29_000, 29_500))),
        Sample(20.0, stats((58_000, 60_000, 29_000 + 30_000_000, 59_000))),
    ]
    ws = windows(s)
    out = lane_outliers(ws, ratio_max=100, floor_per_s=1000)
    assert [o.lane for o in out] == [2]
    assert out[0].ratio == pytest.approx(3_000_000 / 2950, rel=0.01)
    assert out[0].start == 10.0


def test_unused_lanes_do_not_make_a_trickle_look_infinite() -> None:
    # QSFP112: two lanes in use log a steady trickle, two never move.
    s = [Sample(t, stats((int(3 * t), int(2 * t), 0, 0))) for t in (0.0, 10.0, 20.0)]
    ws = windows(s)
    assert lanes_in_use(ws) == [0, 1]
    assert lane_outliers(ws, ratio_max=100, floor_per_s=1000) == []


def test_lone_lane_uses_the_floor() -> None:
    s = [Sample(0.0, stats((0, 0, 0, 0))), Sample(1.0, stats((0, 0, 500_000, 0)))]
    out = lane_outliers(windows(s), ratio_max=100, floor_per_s=1000)
    assert [(o.lane, o.median_others_per_s) for o in out] == [(2, 0.0)]
    quiet = [Sample(0.0, stats((0, 0, 0, 0))), Sample(1.0, stats((0, 0, 50_000, 0)))]
    assert lane_outliers(windows(quiet), ratio_max=100, floor_per_s=1000) == []


def test_post_fec_growth() -> None:
    a = Sample(0.0, stats((0,) * 4, rx_pcs_symbol_err_phy=5, link_down_events_phy=1))
    b = Sample(5.0, stats((0,) * 4, rx_pcs_symbol_err_phy=7, link_down_events_phy=2))
    g = growth(windows([a, b]))
    assert g and g.symbol_errors == 2 and g.link_down_events == 1 and g.crc_errors == 0
    assert "rx_pcs_symbol_err_phy +2" in g.describe()
    assert not growth(windows([a, a.__class__(9.0, a.stats)]))


def test_counter_reset_is_not_growth() -> None:
    a = Sample(0.0, stats((500, 0, 0, 0), rx_crc_errors_phy=9))
    b = Sample(1.0, stats((0, 0, 0, 0), rx_crc_errors_phy=0))
    w = window(a, b)
    assert w.crc_errors == 0 and w.lane_rates[0] == 0


def test_out_of_order_samples_refused() -> None:
    a = Sample(1.0, stats((0,) * 4))
    with pytest.raises(ValueError, match="out of order"):
        window(a, Sample(1.0, a.stats))


def test_real_counter_names_with_digits() -> None:
    text = (
        "NIC statistics:\n     rx_err_lane_0_phy: 6\n     rx_err_lane_1_phy: 2\n"
        "     rx_err_lane_2_phy: 190\n     rx_err_lane_3_phy: 0\n     rx_corrected_bits_phy: 198\n"
    )
    a = Sample(0.0, stats((0, 0, 0, 0)))
    b = Sample(2.0, parse_ethtool_stats(text))
    w = window(a, b)
    assert w.lane_rates == {0: 3.0, 1: 1.0, 2: 95.0, 3: 0.0}
    assert max_lane_rates([w]) == {0: 3.0, 1: 1.0, 2: 95.0, 3: 0.0}
    assert max_ber([w]) == pytest.approx(198 / (200e9 * 2))


@given(
    st.lists(st.integers(min_value=0, max_value=10**12), min_size=4, max_size=4),
    st.lists(st.integers(min_value=0, max_value=10**9), min_size=4, max_size=4),
    st.floats(min_value=0.001, max_value=1e5),
)
def test_rates_are_deltas_over_time(base: list[int], growth_: list[int], dt: float) -> None:
    a = Sample(0.0, stats(tuple(base)))
    b = Sample(dt, stats(tuple(x + y for x, y in zip(base, growth_, strict=True))))
    w = window(a, b)
    for lane, g in enumerate(growth_):
        assert w.lane_rates[lane] == pytest.approx(g / dt)
    assert w.corrected == sum(growth_)
    assert w.ber is not None and w.ber >= 0


FLOOR_PER_S = 10.0  # the default floor: near the healthy trickle of a few errors/s


def test_a_3k_lane_beside_a_trickle_is_flagged_on_a_qsfp112_dac() -> None:
    # The field case: one lane at ~2.9k errors/s while its neighbour trickles at a few per s.
    s = [Sample(t, stats((int(3 * t), int(2900 * t), 0, 0))) for t in (0.0, 10.0, 20.0)]
    lanes = active_lanes(speed_mbps=200_000, lanes_reported=None, form="QSFP112")
    out = lane_outliers(windows(s), ratio_max=100, floor_per_s=FLOOR_PER_S, lanes=lanes)
    assert [(o.lane, o.rate_per_s, o.median_others_per_s) for o in out] == [(1, 2900.0, 3.0)]
    # With the old floor of 1000/s, it would have passed: the reason for the change.
    assert lane_outliers(windows(s), ratio_max=100, floor_per_s=1000, lanes=lanes) == []


@given(
    st.lists(st.floats(min_value=0.0, max_value=8.0), min_size=4, max_size=4),
    st.floats(min_value=1.0, max_value=60.0),
)
def test_a_healthy_trickle_is_never_flagged(rates: list[float], dt: float) -> None:
    a = Sample(0.0, stats((0, 0, 0, 0)))
    b = Sample(dt, stats(tuple(int(r * dt) for r in rates)))
    assert lane_outliers(windows([a, b]), ratio_max=100, floor_per_s=FLOOR_PER_S) == []


def test_lanes_not_in_use_are_not_judged() -> None:
    # A 200G QSFP112 DAC runs lanes 0-1: a counter moving on lane 3 is no lane of this link.
    s = [Sample(0.0, stats((0, 0, 0, 0))), Sample(10.0, stats((30, 30, 0, 50_000)))]
    lanes = active_lanes(speed_mbps=200_000, lanes_reported=None, form="QSFP112")
    assert lanes == (0, 1)
    assert lane_outliers(windows(s), ratio_max=100, floor_per_s=FLOOR_PER_S, lanes=lanes) == []
    assert [o.lane for o in lane_outliers(windows(s), ratio_max=100, floor_per_s=10)] == [3]


@pytest.mark.parametrize(
    ("speed", "reported", "form", "lanes"),
    [
        (200_000, None, "QSFP112", (0, 1)),
        (200_000, None, "QSFP56", (0, 1, 2, 3)),
        (200_000, None, None, (0, 1, 2, 3)),
        (100_000, None, "QSFP112", (0, 1, 2, 3)),
        (200_000, 2, None, (0, 1)),
        (200_000, 4, "QSFP112", (0, 1, 2, 3)),
        (None, None, "QSFP112", (0, 1, 2, 3)),
    ],
)
def test_active_lanes(
    speed: int | None, reported: int | None, form: str | None, lanes: tuple[int, ...]
) -> None:
    assert active_lanes(speed_mbps=speed, lanes_reported=reported, form=form) == lanes  # type: ignore[arg-type]


def test_no_lane_counters_is_told_apart_from_zero_errors() -> None:
    quiet = [Sample(0.0, stats((0, 0, 0, 0))), Sample(10.0, stats((0, 0, 0, 0)))]
    bare = [Sample(t, EthtoolStats({"rx_corrected_bits_phy": 0})) for t in (0.0, 10.0)]
    assert has_lane_counters(quiet) and not has_lane_counters(bare)
