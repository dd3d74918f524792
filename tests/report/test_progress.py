"""Progress that fits a terminal: one status line in place on a TTY, few plain lines in a log."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.report.progress import (
    CLEAR,
    Status,
    Terminal,
    done_share,
    eta_text,
)


def test_share_done_from_rounds_and_soak_seconds() -> None:
    assert done_share("RDMA round 3/5: spark-1<->spark-2") == 2 / 5
    assert done_share("soak 2 min of 10 min (20%), hottest NIC 60 C") == 0.2
    assert done_share("jumbo DF pings: 24 directed links at once") is None


def test_eta_from_the_time_so_far() -> None:
    assert eta_text(60.0, 0.2) == "ETA 4 min"
    assert eta_text(70.0, 0.5) == "ETA 1 min 10 s"
    assert eta_text(10.0, 0.5) == "ETA 10 s"
    assert eta_text(1.0, 0.5) == "ETA 1 s"
    assert eta_text(10.0, 0.0) is None
    assert eta_text(10.0, None) is None


def test_a_tty_updates_one_line_in_place() -> None:
    s = Status(tty=True, width=40)
    s.phase(0.0)
    first = s.show("soak 1 min of 10 min (10%), worst lane 3 errors/s", 60.0)
    assert first is not None and first.startswith(CLEAR) and "\n" not in first
    assert len(first) - len(CLEAR) <= 39  # never wraps onto a second line
    again = s.show("soak 2 min of 10 min (20%), worst lane 4 errors/s", 61.0)
    assert again is not None and again.startswith(CLEAR)  # every update shows, in place
    assert s.close() == CLEAR
    assert s.close() is None


class _Reporter:
    """pytest's terminal reporter, as much of it as `Terminal` uses."""

    def __init__(self, tty: bool) -> None:
        self.isatty = tty
        self.out: list[str] = []

    def write_line(self, text: str) -> None:
        self.out.append(text + "\n")

    def ensure_newline(self) -> None:
        if self.out and not self.out[-1].endswith("\n"):
            self.out.append("\n")

    def rewrite(self, text: str, erase: bool = False) -> None:
        assert erase
        self.out.append(CLEAR + text)


class _Config:
    def __init__(self, reporter: _Reporter) -> None:
        self.pluginmanager = self
        self.reporter = reporter

    def get_verbosity(self) -> int:
        return 0

    def get_plugin(self, name: str) -> _Reporter | None:
        return self.reporter if name == "terminalreporter" else None


def _run(tty: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    clock = iter([0.0, 10.0, 20.0, 45.0, 46.0])
    monkeypatch.setattr("pytest_sparkfabric.report.progress.time.monotonic", lambda: next(clock))
    reporter = _Reporter(tty)
    terminal = Terminal(_Config(reporter), "sparkfabric")  # type: ignore[arg-type]
    terminal.show("RDMA bandwidth: 4 rounds")
    for k in range(1, 5):
        terminal.show(f"RDMA round {k}/4: a<->b", status=True)
    terminal.close()
    return reporter.out


def test_a_tty_keeps_the_status_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _run(True, monkeypatch)
    assert out[0] == "sparkfabric: RDMA bandwidth: 4 rounds\n"
    updates = out[1:-1]
    assert len(updates) == 4 and all(u.startswith(CLEAR) and "\n" not in u for u in updates)
    assert updates[2].endswith("round 3/4: a<->b, ETA 45 s")
    assert out[-1] == CLEAR


def test_a_log_gets_a_plain_status_every_30_s(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(False, monkeypatch) == [
        "sparkfabric: RDMA bandwidth: 4 rounds\n",
        "sparkfabric: RDMA round 1/4: a<->b\n",
        "sparkfabric: RDMA round 3/4: a<->b, ETA 45 s\n",
    ]
