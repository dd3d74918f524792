"""Per-lane rates and BER over counter windows, the lanes in use, the lane judgement, and the
module temperature with its own limit from real `ethtool -m` outputs (pure)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric.cluster.thresholds import defaults
from pytest_sparkfabric.measure import counters, soak
from pytest_sparkfabric.measure.counters import Snapshot, Window, window
from pytest_sparkfabric.probes.ethtool import parse_ethtool_module
from pytest_sparkfabric.transport import RunResult

DATA = Path(__file__).resolve().parents[1] / "data" / "ethtool-module"
# The shipped limits: lanes at 100x (warn 10x) their neighbours over 10/s, 2x with heat, BER 2.4e-5.
LIMITS: dict[str, float] = {n: t.value for n, t in defaults("direct", 2).items()}


def snap(t: float, lanes: tuple[int, ...], **extra: int) -> Snapshot:
    counters = {f"rx_err_lane_{i}_phy": v for i, v in enumerate(lanes)}
    counters["rx_corrected_bits_phy"] = sum(lanes)
    return Snapshot(t, {**counters, **extra})


def windows(*snaps: Snapshot) -> list[Window]:
    return [window("soak", f"w{i}", a, b) for i, (a, b) in enumerate(itertools.pairwise(snaps))]


def series(rates: list[tuple[float, ...]], dt: float = 10.0) -> list[Window]:
    """Windows of `dt` seconds, each lane at the given rate per second in that window."""
    totals = [0.0] * len(rates[0])
    snaps = [snap(0.0, tuple(0 for _ in totals))]
    for i, r in enumerate(rates, 1):
        totals = [a + b * dt for a, b in zip(totals, r, strict=True)]
        snaps.append(snap(i * dt, tuple(int(x) for x in totals)))
    return windows(*snaps)


def test_rates_ber_and_post_fec_growth() -> None:
    a = snap(0.0, (0,) * 4, rx_bits_phy=0, rx_pcs_symbol_err_phy=5, link_down_events_phy=1)
    grown = {"rx_bits_phy": 2 * 10**12, "rx_pcs_symbol_err_phy": 7, "link_down_events_phy": 2}
    (w,) = windows(a, snap(10.0, (100, 200, 0, 0), **grown))
    assert counters.post_fec_growth([w]) == {"rx_pcs_symbol_err_phy": 2, "link_down_events_phy": 1}
    assert soak.lane_rates(w) == {0: 10.0, 1: 20.0, 2: 0.0, 3: 0.0}
    assert soak.ber(w, None) == pytest.approx(300 / 2e12)
    w = series([(2e5, 0, 0, 0)])[0]
    assert soak.ber(w, 200_000) == pytest.approx(1e-6)  # 200G x 10 s
    assert soak.max_ber([w], 100_000) == pytest.approx(2e-6)


@pytest.mark.parametrize(
    ("reported", "ident", "speed", "lanes"),
    [
        (2, None, 200_000, (0, 1)),  # ethtool Lanes: wins
        (None, "0x11 (QSFP28)", 200_000, (0, 1, 2, 3)),  # SFF-8636 at 200G: QSFP56 4 x 50G
        (None, "0x1e (QSFP+ or later with CMIS)", 200_000, (0, 1)),  # CMIS: QSFP112 2 x 100G
        (None, "0x1e (QSFP+ or later with CMIS)", 100_000, (0,)),
        (None, "0x11 (QSFP28)", 100_000, None),  # 4 x 25G NRZ or 2 x 50G PAM4: unknown
        (None, None, 200_000, None),
        # A real CMIS module's EEPROM.
        (None, "cmis-qsfpdd-400g-passive-dac-mellanox-mcp1660-mlxsw-2020-prepatch.txt", 200_000,
         (0, 1)),
    ],
)  # fmt: skip
def test_lanes_in_use_from_the_hardware(
    reported: int | None, ident: str | None, speed: int, lanes: tuple[int, ...] | None
) -> None:
    text = f"Identifier : {ident}\nVendor name : X\n"
    if ident and ident.endswith(".txt"):
        text = (DATA / ident).read_text()
    module = parse_ethtool_module(text) if ident else None
    used, source = soak.lanes_in_use(lanes_reported=reported, module=module, speed_mbps=speed)
    assert used == lanes
    if ident and "cmis" in ident.lower() and lanes:
        assert "CMIS" in source


@pytest.mark.parametrize(
    ("rates", "temps", "in_use", "speed", "want"),
    [
        # Stands alone but stays flat as the NIC warms: a warning.
        ([(3, 3000, 4, 3)] * 3, [60.0, 75.0, 81.0], None, 200_000, [(1, "warn")]),
        # Above the warn ratio without standing alone: a warning.
        ([(3, 200, 4, 3)] * 2, [60.0, 80.0], None, None, [(1, "warn")]),
        # 50G per lane at 200G over 4 lanes: 2e6/s is a lane BER of 4e-5, past the FEC margin.
        ([(2e6,) * 4], [None], (0, 1, 2, 3), 200_000, [(i, "fail") for i in range(4)]),
        # The QSFP112 leg: lanes 2-3 idle at 0 are never compared.
        ([(1500, 900, 0, 0)] * 3, [60.0, 70.0, 80.0], None, 200_000, []),
        ([(1500, 900, 0, 0)] * 3, [60.0, 70.0, 80.0], (0, 1, 2, 3), 200_000, []),
        # A lane not in use is not judged.
        ([(30, 30, 0, 50_000)], [None], (0, 1), 200_000, []),
    ],
)
def test_lane_levels(
    rates: list[tuple[float, ...]],
    temps: list[float | None],
    in_use: tuple[int, ...] | None,
    speed: int | None,
    want: list[tuple[int, str]],
) -> None:
    out = soak.judge_lanes(series(rates), temps, in_use=in_use, speed_mbps=speed, limits=LIMITS)
    assert [(o.lane, o.level) for o in out] == want
    assert all("BER" in o.why for o in out if o.level == "fail")


@given(
    st.floats(min_value=0.0, max_value=5000.0),
    st.lists(st.floats(min_value=0.5, max_value=1.5), min_size=4, max_size=4),
    st.sampled_from([(0, 1), (0, 1, 2, 3), None]),
)
def test_a_healthy_trickle_spread_across_lanes_is_never_flagged(
    level: float, spread: list[float], in_use: tuple[int, ...] | None
) -> None:
    """A few/s to thousands/s on every lane in use, within 3x of each other: never flagged."""
    lanes = len(in_use) if in_use else 4
    rates = tuple(level * f if i < lanes else 0.0 for i, f in enumerate(spread))
    ws = series([rates] * 3)
    assert (
        soak.judge_lanes(ws, [60.0, 70.0, 80.0], in_use=in_use, speed_mbps=200_000, limits=LIMITS)
        == []
    )


@pytest.mark.parametrize(
    ("name", "rc", "want"),
    [
        ("sff8636-qsfp28-cwdm4-finisar-laser-off-cx4.txt", 0, (34.5, 60.0, None)),
        ("sff8472-sfp-dac-ubiquiti-udc2-2m.txt", 0, (None, None, None)),  # a passive DAC
        ("host-ethtool6.1-veth-m-netlink-error-not-supported.txt", 1, None),  # not sampled
    ],
)
def test_module_temperature_and_its_own_limit(
    name: str, rc: int, want: tuple[float | None, ...] | None
) -> None:
    r = RunResult("spark-1", "ethtool -m enp1s0f1np1", rc, (DATA / name).read_text(), "", 0.1)
    assert soak.module_temp(r) == want
    assert soak.degrees("n/a") is None
