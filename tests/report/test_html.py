"""The pytest-html hooks (pure): columns, the diagnosis box, the page's title and summary."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pytest_sparkfabric.report import html
from tests.report.sample import Faults, document


def test_diagnosis_box_escapes_and_orders() -> None:
    box = html.diagnosis_html(
        {"measured": "MTU <1500>", "expected": "MTU 9000", "cause": "c", "fix": "f", "rule": "r"}
    )
    assert box is not None
    assert "MTU &lt;1500&gt;" in box
    assert re.search(r"Measured.*Expected.*Likely cause.*Fix", box)
    assert html.diagnosis_html({"measured": "x"}) is None


def test_table_hooks_insert_matching_cells() -> None:
    hooks = html.HtmlReport(lambda: None)
    header = [
        "<th>Result</th>",
        "<th>Test</th>",
        '<th class="sortable" data-column-type="duration">Duration</th>',
        "<th>Links</th>",
    ]
    hooks.pytest_html_results_table_header(header)
    assert len(header) == 7 and 'data-column-type="sfnode"' in header[2]
    assert not any("Duration" in h for h in header)

    class Report:
        user_properties: ClassVar = [("node", "spark-1"), ("measured", "a\nb")]
        skipped = False
        when = "call"

    row = ["<td>r</td>", "<td>t</td>", '<td class="col-duration">5 ms</td>', "<td>l</td>"]
    hooks.pytest_html_results_table_row(Report(), row)  # type: ignore[arg-type]
    assert len(row) == len(header)
    assert row[2] == '<td class="col-sfnode" style="white-space:nowrap">spark-1</td>'
    assert row[4] == '<td class="col-sfmeasured">a b</td>'


def test_title_names_cluster_and_verdict_and_the_banner_leads_the_summary() -> None:
    doc = document("ring", 4, Faults(bad_cable=1), soak_minutes=1, name="lab")
    hooks = html.HtmlReport(lambda: doc)

    class Page:
        title = "report.html"

    page: Any = Page()
    hooks.pytest_html_report_title(page)
    hooks.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert page.title == "sparkfabric: lab REJECTED"
    prefix: list[str] = []
    hooks.pytest_html_results_summary(prefix, [], [], None)  # type: ignore[arg-type]
    (fragment,) = prefix
    assert fragment.index('data-verdict="rejected"') < fragment.index('class="sf-fabric"')


def test_the_page_says_what_each_node_lacks_and_its_fix() -> None:
    from tests.report.sample import edit

    gap = {
        "prerequisite": "iperf3",
        "reason": "spark-2: iperf3: command not found (iperf3 is not installed, or not on PATH)",
        "fix": "sudo apt install iperf3",
        "needed_for": "iperf3",
    }
    doc = edit(
        document("direct", 2, Faults()),
        preflight=[
            {"node": "spark-1", "found": {"iperf3": "/usr/bin/iperf3"}},
            {"node": "spark-2", "missing": [gap]},
        ],
    )
    (section,) = [s for s in html.sections(doc) if s.key == "preflight"]
    assert section.title == "What the nodes have"
    assert section.html == (
        "<table><tr><th>node</th><th>missing</th><th>fix</th></tr>"
        "<tr><td>spark-1</td><td colspan=2>nothing missing</td></tr>"
        "<tr><td>spark-2</td><td>spark-2: iperf3: command not found (iperf3 is not installed, "
        "or not on PATH)</td><td><code>sudo apt install iperf3</code></td></tr></table>"
    )
    assert not [s for s in html.sections(document("direct", 2, Faults())) if s.key == "preflight"]
