"""Progress that fits a terminal: one status line in place on a TTY, few plain lines in a log."""

from __future__ import annotations

import os

import pytest

from pytest_sparkfabric.report.banner import Terminal, done_share, eta_text

CLEAR = "\r\x1b[K"


def test_share_done_from_rounds_and_soak_seconds() -> None:
    assert done_share("RDMA round 3/5: spark-1<->spark-2") == 2 / 5
    assert done_share("soak 2 min of 10 min (20%), hottest NIC 60 C") == 0.2
    assert done_share("jumbo DF pings: 24 directed links at once") is None


@pytest.mark.parametrize(
    ("elapsed", "share", "eta"),
    [
        (60, 0.2, "ETA 4 min"),
        (70, 0.5, "ETA 1 min 10 s"),
        (10, 0.5, "ETA 10 s"),
        (1, 0.5, "ETA 1 s"),
        (10, 0.0, None),
        (10, None, None),
    ],
)
def test_eta_from_the_time_so_far(elapsed: float, share: float | None, eta: str | None) -> None:
    assert eta_text(elapsed, share) == eta


class _Reporter:
    """pytest's terminal reporter, as much of it as `Terminal` uses (and a config that has it)."""

    def __init__(self, tty: bool) -> None:
        self.isatty = tty
        self.out: list[str] = []
        self.pluginmanager = self

    def get_verbosity(self) -> int:
        return 0

    def get_plugin(self, name: str) -> _Reporter | None:
        return self if name == "terminalreporter" else None

    def write_line(self, text: str) -> None:
        self.out.append(text + "\n")

    def ensure_newline(self) -> None:
        if self.out and not self.out[-1].endswith("\n"):
            self.out.append("\n")

    def rewrite(self, text: str, erase: bool = False) -> None:
        assert erase
        self.out.append(CLEAR + text)


def _run(tty: bool, monkeypatch: pytest.MonkeyPatch, *lines: str) -> list[str]:
    clock = iter([0.0, 10.0, 20.0, 45.0, 46.0])
    monkeypatch.setattr("pytest_sparkfabric.report.banner.time.monotonic", lambda: next(clock))
    size = os.terminal_size((40, 24))
    monkeypatch.setattr("pytest_sparkfabric.report.banner.shutil.get_terminal_size", lambda: size)
    reporter = _Reporter(tty)
    terminal = Terminal(reporter, "sparkfabric")  # type: ignore[arg-type]
    terminal.show("RDMA bandwidth: 4 rounds")
    for line in lines or [f"RDMA round {k}/4: a<->b" for k in range(1, 5)]:
        terminal.show(line, status=True)
    terminal.close()
    terminal.close()
    return reporter.out


def test_a_tty_keeps_the_status_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _run(True, monkeypatch)
    assert out[0] == "sparkfabric: RDMA bandwidth: 4 rounds\n"
    updates = out[1:-1]
    assert len(updates) == 4 and all(u.startswith(CLEAR) and "\n" not in u for u in updates)
    assert updates[2] == CLEAR + "sparkfabric: RDMA round 3/4: a<->b, ETA"  # 39 wide: never wraps
    assert out[-1] == CLEAR  # erased once before pytest's next line


def test_a_log_gets_a_plain_status_every_30_s(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(False, monkeypatch) == [
        "sparkfabric: RDMA bandwidth: 4 rounds\n",
        "sparkfabric: RDMA round 1/4: a<->b\n",
        "sparkfabric: RDMA round 3/4: a<->b, ETA 45 s\n",
    ]
