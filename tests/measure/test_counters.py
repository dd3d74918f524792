"""Lossy-RoCE counter snapshots, deltas and the judgement (measure/counters.py)."""

from __future__ import annotations

from pytest_sparkfabric.measure.counters import delta, judge, kind_of, snapshot

BEFORE = {
    "rx_packets_phy": 1_000,
    "rx_discards_phy": 5,
    "rx_prio3_pause": 7,
    "rx_ecn_mark": 0,
    "rx_bytes": 123,
}
HW = {"out_of_sequence": 2, "np_cnp_sent": 1, "rx_write_requests": 9}


def _after(**grow: int) -> dict[str, int]:
    out = dict(BEFORE)
    out["rx_packets_phy"] += 1_000_000
    for k, v in grow.items():
        out[k] = out.get(k, 0) + v
    return out


def test_only_watched_counters_are_kept() -> None:
    s = snapshot(0.0, BEFORE, HW)
    assert set(s.values) == {
        "rx_packets_phy",
        "rx_discards_phy",
        "rx_prio3_pause",
        "rx_ecn_mark",
        "hw:out_of_sequence",
        "hw:np_cnp_sent",
    }
    assert kind_of("rx_prio5_discards") == "discard"
    assert kind_of("hw:local_ack_timeout_err") == "sequence"
    assert kind_of("tx_prio3_pause") == "pause"
    assert kind_of("hw:rp_cnp_handled") == "congestion"
    assert kind_of("rx_bytes") is None


def test_delta_is_growth_and_skips_resets() -> None:
    a = snapshot(10.0, BEFORE, HW)
    after = _after(rx_discards_phy=300)
    after["rx_prio3_pause"] = 0  # a reset: left out, never negative
    b = snapshot(20.0, after, {**HW, "out_of_sequence": 12})
    d = delta(a, b)
    assert d.seconds == 10.0 and d.rx_frames == 1_000_000
    assert d.growth["rx_discards_phy"] == 300 and d.growth["hw:out_of_sequence"] == 10
    assert "rx_prio3_pause" not in d.growth


def test_lossy_fails_only_large_discards() -> None:
    a = snapshot(0.0, BEFORE, HW)
    small = delta(a, snapshot(1.0, _after(rx_discards_phy=999), {**HW, "out_of_sequence": 50}))
    assert judge(small, lossless=False, discard_pct_max=0.1) == []
    big = delta(a, snapshot(1.0, _after(rx_discards_phy=20_000), HW))
    found = judge(big, lossless=False, discard_pct_max=0.1)
    assert [f.counter for f in found] == ["rx_discards_phy"]
    assert "2% of 1000000 frames received" in found[0].why


def test_lossless_fails_any_drop_or_sequence_error_naming_it() -> None:
    a = snapshot(0.0, BEFORE, HW)
    d = delta(a, snapshot(1.0, _after(rx_discards_phy=1), {**HW, "out_of_sequence": 3}))
    found = judge(d, lossless=True, discard_pct_max=0.1)
    assert [(f.counter, f.growth) for f in found] == [
        ("hw:out_of_sequence", 1),
        ("rx_discards_phy", 1),
    ]


def test_pause_and_ecn_growth_never_fail() -> None:
    a = snapshot(0.0, BEFORE, HW)
    d = delta(a, snapshot(1.0, _after(rx_prio3_pause=10**6, rx_ecn_mark=10**5), HW))
    assert judge(d, lossless=True, discard_pct_max=0.1) == []
    assert d.of_kind("pause") == {"rx_prio3_pause": 10**6}
