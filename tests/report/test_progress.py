"""Progress that fits a terminal: one status line in place on a TTY, few plain lines in a log."""

from __future__ import annotations

from pytest_sparkfabric.report.progress import CLEAR, PLAIN_EVERY_S, Status, done_share, eta_text


def test_share_done_from_rounds_and_soak_seconds() -> None:
    assert done_share("RDMA round 3/5: spark-1<->spark-2") == 2 / 5
    assert done_share("soak 120/600 s, hottest NIC 60 C") == 0.2
    assert done_share("jumbo DF pings: 24 directed links at once") is None


def test_eta_from_the_time_so_far() -> None:
    assert eta_text(60.0, 0.2) == "ETA 4m00s"
    assert eta_text(10.0, 0.5) == "ETA 10s"
    assert eta_text(10.0, 0.0) is None
    assert eta_text(10.0, None) is None


def test_a_tty_updates_one_line_in_place() -> None:
    s = Status(tty=True, width=40)
    s.phase(0.0)
    first = s.show("soak 60/600 s, worst lane 3 errors/s", 60.0)
    assert first is not None and first.startswith(CLEAR) and "\n" not in first
    assert len(first) - len(CLEAR) <= 39  # never wraps onto a second line
    again = s.show("soak 120/600 s, worst lane 4 errors/s", 61.0)
    assert again is not None and again.startswith(CLEAR)  # every update shows, in place
    assert s.close() == CLEAR
    assert s.close() is None


def test_a_log_gets_a_plain_line_at_most_every_30_s() -> None:
    s = Status(tty=False)
    s.phase(0.0)
    shown = [s.show(f"soak {t}/600 s", float(t)) for t in range(10, 600, 10)]
    lines = [x for x in shown if x is not None]
    assert lines[0] == "soak 10/600 s, ETA 9m50s"
    assert all(CLEAR not in x for x in lines)
    assert len(lines) == len(range(10, 600, int(PLAIN_EVERY_S)))
    assert s.close() is None
