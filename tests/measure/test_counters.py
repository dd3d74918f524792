"""The one counter log (measure/counters.py) and the host rail judgement (rail_counters.py)."""

from __future__ import annotations

from collections.abc import Iterator

from pytest_sparkfabric.measure.counters import Log, Snapshot, Watch, Window, window
from pytest_sparkfabric.measure.rail_counters import judge, kind_of, snapshot

BEFORE = {
    "rx_packets_phy": 1_000,
    "rx_discards_phy": 5,
    "rx_prio3_pause": 7,
    "rx_ecn_mark": 0,
    "link_down_events_phy": 2,
}
HW = {"out_of_sequence": 2, "np_cnp_sent": 1}


def _after(**grow: int) -> dict[str, int]:
    out = dict(BEFORE)
    out["rx_packets_phy"] += 1_000_000
    for k, v in grow.items():
        out[k] = out.get(k, 0) + v
    return out


def _w(after: dict[str, int], hw: dict[str, int] = HW) -> Window:
    return window("rdma", "RDMA round 1", snapshot(0.0, BEFORE, HW), snapshot(10.0, after, hw))


def test_window_is_growth_and_lists_what_went_back() -> None:
    after = _after(rx_discards_phy=300)
    after["rx_prio3_pause"] = 0  # a reset: never negative growth
    w = window(
        "rdma",
        "r1",
        snapshot(10.0, BEFORE, HW),
        snapshot(20.0, after, {**HW, "out_of_sequence": 12}),
    )
    assert w.seconds == 10.0 and w.growth["rx_packets_phy"] == 1_000_000
    assert w.growth["rx_discards_phy"] == 300 and w.growth["hw:out_of_sequence"] == 10
    assert "rx_prio3_pause" not in w.growth and w.went_back == ("rx_prio3_pause",)
    assert w.rate("rx_discards_phy") == 30.0
    assert kind_of("rx_prio5_discards") == "discard" and kind_of("rx_bytes") is None


def test_watch_logs_one_window_per_object_per_step_and_keeps_errors() -> None:
    reads: Iterator[dict[str, Snapshot | str]] = iter(
        [
            {"a": Snapshot(0.0, {"x": 1}), "b": "b: ethtool failed"},
            {"a": Snapshot(5.0, {"x": 4}), "b": Snapshot(5.0, {"x": 0})},
            {"a": "a: timed out", "b": Snapshot(9.0, {"x": 2})},
            {"a": Snapshot(12.0, {"x": 10}), "b": Snapshot(12.0, {"x": 2})},
        ]
    )
    log = Log()
    watch = Watch(log, "soak", ("a", "b"), lambda: next(reads)).start()
    for label in ("s1", "s2", "s3"):
        watch.step(label)
    a, b = log.of("a", "soak"), log.of("b")
    assert [(w.label, w.growth.get("x"), w.error) for w in a] == [
        ("s1", 3, None),
        ("s2", None, "a: timed out"),
        ("s3", 6, None),  # from the last good snapshot: nothing lost
    ]
    assert [w.error for w in b] == ["b: ethtool failed", None, None]
    assert log.of("a", "rdma") == ()


def test_post_fec_growth_fails_every_traffic_window() -> None:
    found = judge(_w(_after(link_down_events_phy=1)), lossless=False, discard_pct_max=0.1)
    assert [(f.counter, f.rule) for f in found] == [("link_down_events_phy", "link_down")]
    quiet = judge(
        _w(_after(link_down_events_phy=1)),
        lossless=False,
        discard_pct_max=0.1,
        post_fec=False,
    )
    assert quiet == []


def test_lossy_fails_only_large_discards() -> None:
    small = _w(_after(rx_discards_phy=999), {**HW, "out_of_sequence": 50})
    assert judge(small, lossless=False, discard_pct_max=0.1) == []
    found = judge(_w(_after(rx_discards_phy=20_000)), lossless=False, discard_pct_max=0.1)
    assert [f.counter for f in found] == ["rx_discards_phy"]
    assert "2% of 1000000 frames received" in found[0].why


def test_lossless_fails_any_drop_or_sequence_error_and_never_pause() -> None:
    d = _w(_after(rx_discards_phy=1, rx_prio3_pause=10**6), {**HW, "out_of_sequence": 3})
    found = judge(d, lossless=True, discard_pct_max=0.1)
    assert [(f.counter, f.growth) for f in found] == [
        ("hw:out_of_sequence", 1),
        ("rx_discards_phy", 1),
    ]
