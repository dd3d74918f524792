"""The one counter log and the host rail judgement (measure/counters.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_sparkfabric.measure.counters import Log, Snapshot, Watch, Window, judge, kind_of, window

BEFORE = {
    "rx_packets_phy": 1_000,
    "rx_discards_phy": 5,
    "rx_prio3_pause": 7,
    "link_down_events_phy": 2,
    "hw:out_of_sequence": 2,
}


def _w(**grow: int) -> Window:
    after = {**BEFORE, "rx_packets_phy": 1_001_000}
    after |= {k: after.get(k, 0) + v for k, v in grow.items()}
    return window("rdma", "RDMA round 1", Snapshot(10.0, BEFORE), Snapshot(20.0, after))


def test_window_is_growth_and_lists_what_went_back() -> None:
    w = _w(rx_discards_phy=300, rx_prio3_pause=-7, **{"hw:out_of_sequence": 10})
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
    watch = Watch(log, "soak", ("a", "b"), lambda: next(reads))
    for label in ("start", "s1", "s2", "s3"):
        watch.step(label)
    a, b = log.of("a", "soak"), log.of("b")
    # s3 runs from the last good snapshot: nothing lost.
    want = [("s1", 3, None), ("s2", None, "a: timed out"), ("s3", 6, None)]
    assert [(w.label, w.growth.get("x"), w.error) for w in a] == want
    assert [w.error for w in b] == ["b: ethtool failed", None, None]
    assert log.of("a", "rdma") == ()


@pytest.mark.parametrize(
    ("grow", "lossless", "post_fec", "want"),
    [
        ({"link_down_events_phy": 1}, False, True, [("link_down_events_phy", 1, "link_down")]),
        ({"link_down_events_phy": 1}, False, False, []),
        # Lossy: only discards above 0.1% of the frames received fail, never sequence errors.
        ({"rx_discards_phy": 999, "hw:out_of_sequence": 48}, False, True, []),
        ({"rx_discards_phy": 20_000}, False, True, [("rx_discards_phy", 20_000, "rx_discards")]),
        # Lossless: any drop or sequence error, never pause.
        ({"rx_discards_phy": 1, "rx_prio3_pause": 10**6, "hw:out_of_sequence": 1}, True, True,
         [("hw:out_of_sequence", 1, "rx_discards"), ("rx_discards_phy", 1, "rx_discards")]),
    ],
)  # fmt: skip
def test_judge(
    grow: dict[str, int], lossless: bool, post_fec: bool, want: list[tuple[str, int, str]]
) -> None:
    found = judge(_w(**grow), lossless=lossless, discard_pct_max=0.1, post_fec=post_fec)
    assert [(f.counter, f.growth, f.rule) for f in found] == want
    if want == [("rx_discards_phy", 20_000, "rx_discards")]:
        assert "2% of 1000000 frames received" in found[0].why
