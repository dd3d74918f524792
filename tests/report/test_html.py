"""The pytest-html hooks (pure): columns, the diagnosis box, the run's summary line."""

from __future__ import annotations

import re
from typing import ClassVar

from pytest_sparkfabric.report import ReportData, html

DATA = ReportData(
    cluster_file="/lab/cluster.yaml",
    topology="switch",
    nodes=("spark-1", "spark-2"),
    transport="sim",
    mtu=9000,
    warnings=("WARNING switch sw: <plain HTTP>",),
)


def test_diagnosis_box_escapes_and_orders() -> None:
    box = html.diagnosis_html(
        {"measured": "MTU <1500>", "expected": "MTU 9000", "cause": "c", "fix": "f", "rule": "r"}
    )
    assert box is not None
    assert "MTU &lt;1500&gt;" in box
    assert re.search(r"Measured.*Expected.*Likely cause.*Fix", box)
    assert html.diagnosis_html({"measured": "x"}) is None


def test_table_hooks_insert_matching_cells() -> None:
    hooks = html.HtmlReport(DATA)
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


def test_summary_names_the_cluster_and_its_warnings_escaped() -> None:
    prefix: list[str] = []
    html.HtmlReport(DATA).pytest_html_results_summary(prefix, [], [], None)  # type: ignore[arg-type]
    assert prefix == [
        "<p>sparkfabric: cluster.yaml: switch, 2 nodes (spark-1, spark-2), transport sim, "
        "MTU 9000</p>",
        '<p class="sparkfabric-warning"><strong>WARNING switch sw: &lt;plain HTTP&gt;</strong></p>',
    ]
