"""The verdict first: terminal lines and the HTML banner say the verdict, the cluster, the
counts, each root cause once with its objects and fix, and what no cause explains; and progress
that fits a terminal: one status line in place on a TTY, few plain lines in a log."""

from __future__ import annotations

import os
import re

import pytest

from pytest_sparkfabric.report.banner import Terminal, eta_text, html, terminal_lines
from tests.report.sample import Faults, document, edit


def test_terminal_lines_and_html_of_a_healthy_run() -> None:
    doc = document("direct", 2, name="bench-pair", soak_minutes=1)
    lines = terminal_lines(doc)
    assert [ln.text for ln in lines] == [
        "sparkfabric: ACCEPTED  bench-pair: direct, 2 nodes, 2025-06-01 10:00 +00:00, 12 min 04 s",
        "  13 passed, 0 warned, 0 failed, 0 not measured (13 checks)",
    ]
    assert lines[0].tone == "good"
    out = html(doc)
    assert 'data-verdict="accepted"' in out
    assert "sf-causes" not in out and "sf-unexplained" not in out


def test_terminal_lines_name_each_root_cause_once_with_objects_and_fix() -> None:
    lines = terminal_lines(document("mesh", 3, Faults(bad_cable=1, throttled=0), soak_minutes=1))
    text = [ln.text for ln in lines]
    assert text[0].startswith("sparkfabric: REJECTED  mesh-3: mesh, 3 nodes,")
    assert lines[0].tone == "bad"
    assert text[2] == "  2 root causes explain 17 of 17 failures:"
    assert text[3] == (
        "  1. [lane_outlier] spark-2:p0<->spark-3:p1: one lane of the cable logs far more "
        "errors than the others: a marginal cable"
    )
    assert text[4] == "     Fix: replace the cable before it drops the link"
    assert text[5] == "     seen: lane 2 rose from 2.9k to millions of corrected bits/s under load"
    assert text[6] == "     explains 4 checks"
    assert text[7].startswith("  2. [nic_throttled] spark-1: the NIC is throttled")
    assert text[9] == "     explains 13 checks"
    assert len(text) == 10


def test_unexplained_failures_are_listed_up_to_a_limit() -> None:
    doc = edit(document("switch", 4, Faults(throttled=0), soak_minutes=1), causes=[])
    text = [ln.text for ln in terminal_lines(doc)]
    assert text[2] == "  no root cause found"
    assert text[3] == "  failures:"
    assert len(text) == 4 + 5 + 1
    assert re.fullmatch(r"    \.\.\. and \d+ more \(see the report\)", text[-1])


def test_incomplete_when_something_was_not_measured() -> None:
    lines = terminal_lines(document("ring", 4, Faults(unmeasured=True), soak_minutes=1))
    assert lines[0].text.startswith("sparkfabric: INCOMPLETE  ring-4")
    assert lines[0].tone == "warn"
    assert "1 not measured" in lines[1].text
    assert [ln.text for ln in lines[2:]] == [
        "  no root cause found",
        "  failures:",
        "    test_soak.py::test_cable[spark-1:p0<->spark-2:p1]",
    ]


def test_html_banner_has_the_verdict_counts_and_collapsed_items() -> None:
    out = html(document("mesh", 3, Faults(bad_cable=1, throttled=0), soak_minutes=1))
    assert out.startswith('<section class="sf-banner sf-rejected" data-verdict="rejected">')
    assert '<span class="sf-verdict-word">REJECTED</span>' in out
    assert "mesh-3: mesh, 3 nodes, 2025-06-01 10:00 +00:00, 12 min 04 s" in out
    assert "20 passed, 0 warned, 17 failed, 0 not measured (37 checks)" in out
    assert '<h2 class="sf-causes-head">2 root causes explain 17 of 17 failures</h2>' in out
    assert out.count('<li class="sf-cause"') == 2
    assert '<code class="sf-object">spark-2:p0&lt;-&gt;spark-3:p1</code>' in out
    # Explained items are collapsed (<details> is closed unless it says open).
    assert "<details><summary>explains 4 failed checks</summary>" in out
    assert "<details open" not in out
    assert "measured 0.3 Gb/s, expected &gt;= 80 Gb/s" in out
    assert "<summary>phases</summary>" in out


def test_html_banner_escapes_everything_from_tool_output() -> None:
    doc = document("direct", 2, Faults(bad_cable=0, hostile=True), soak_minutes=1)
    doc = edit(doc, safety=["switch <admin> & co"])
    out = html(doc)
    assert "<script>" not in out and "<admin>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert 'data-rule="&lt;rule&amp;&gt;"' in out
    assert "switch &lt;admin&gt; &amp; co" in out


CLEAR = "\r\x1b[K"


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


def _run(tty: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    clock = iter([0.0, 10.0, 20.0, 45.0, 46.0])
    monkeypatch.setattr("pytest_sparkfabric.report.banner.time.monotonic", lambda: next(clock))
    size = os.terminal_size((40, 24))
    monkeypatch.setattr("pytest_sparkfabric.report.banner.shutil.get_terminal_size", lambda: size)
    reporter = _Reporter(tty)
    terminal = Terminal(reporter, "ssh")  # type: ignore[arg-type]
    terminal.show("RDMA bandwidth: 4 rounds")
    for k in range(4):
        terminal.status(f"RDMA round {k + 1}/4: a<->b", k / 4)
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
