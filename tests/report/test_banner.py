"""The verdict first: terminal lines and the HTML banner say the verdict, the cluster, the
counts, each root cause once with its objects and fix, and what no cause explains."""

from __future__ import annotations

import re

from pytest_sparkfabric.report.banner import html, terminal_lines
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
