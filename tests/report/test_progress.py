"""Progress that fits a terminal: one status line in place on a TTY, few plain lines in a log."""

from __future__ import annotations

from typing import Any

import pytest

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


class _File:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class _Writer:
    """pytest's TerminalWriter as the session uses it."""

    def __init__(self, tty: bool) -> None:
        self._file = _File(tty)
        self._current_line = ""
        self.fullwidth = 60
        self.out: list[str] = []

    @property
    def width_of_current_line(self) -> int:
        return len(self._current_line)

    def line(self, text: str = "") -> None:
        self.write(text + "\n")

    def write(self, text: str, flush: bool = False) -> None:
        self.out.append(text)
        tail = text.rsplit("\n", 1)[-1]
        self._current_line = tail if "\n" in text else self._current_line + tail


class _Reporter:
    currentfspath = None

    def __init__(self, tw: _Writer) -> None:
        self.tw = tw

    def write_line(self, text: str) -> None:
        self.tw.line(text)


def _session(tw: _Writer) -> Any:
    from pytest_sparkfabric.session import SparkSession

    class Config:
        def get_terminal_writer(self) -> _Writer:
            return tw

    s = SparkSession.__new__(SparkSession)
    s.config = Config()  # type: ignore[assignment]
    s._status = None
    s._pad = None
    return s


def _run(tw: _Writer, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 10.0, 20.0, 45.0, 46.0])
    monkeypatch.setattr("pytest_sparkfabric.session.time.monotonic", lambda: next(clock))
    session, reporter = _session(tw), _Reporter(tw)
    session._write_progress(reporter, "sparkfabric: RDMA bandwidth: 4 rounds", False)
    for k in range(1, 5):
        session._write_progress(reporter, f"sparkfabric: RDMA round {k}/4: a<->b", True)
    session._close_status(tw)


def test_the_session_keeps_a_tty_status_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    tw = _Writer(tty=True)
    _run(tw, monkeypatch)
    assert tw.out[0] == "sparkfabric: RDMA bandwidth: 4 rounds\n"
    updates = tw.out[1:-1]
    assert len(updates) == 4 and all(u.startswith(CLEAR) and "\n" not in u for u in updates)
    assert updates[2].endswith("round 3/4: a<->b, ETA 45s")
    assert tw.out[-1] == CLEAR and tw.width_of_current_line == 0


def test_the_session_prints_a_plain_status_every_30_s_in_a_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tw = _Writer(tty=False)
    _run(tw, monkeypatch)
    assert tw.out == [
        "sparkfabric: RDMA bandwidth: 4 rounds\n",
        "sparkfabric: RDMA round 1/4: a<->b\n",
        "sparkfabric: RDMA round 3/4: a<->b, ETA 45s\n",
    ]
