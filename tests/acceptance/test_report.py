"""HTML columns and diagnosis box, JUnit properties, and the suite without pytest-html."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import ClassVar

import pytest

from pytest_sparkfabric import report
from pytest_sparkfabric.report import html

from .conftest import run_suite, write_cluster

# The lead registers the report hooks in plugin.py; until then (and harmlessly after) the
# runs below register them themselves.


class _Register:
    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        report.register(config)


@pytest.fixture
def mtu_fault(pytester: pytest.Pytester) -> Path:
    return write_cluster(
        pytester.path, "direct-2.yaml", faults=[{"fault": "mtu", "node": "spark-1", "value": 1500}]
    )


def test_html_and_junit_reports(pytester: pytest.Pytester, mtu_fault: Path) -> None:
    page, junit = pytester.path / "report.html", pytester.path / "junit.xml"
    run = run_suite(
        pytester,
        mtu_fault,
        "--html",
        str(page),
        "--self-contained-html",
        f"--junitxml={junit}",
        markers="mtu",
        plugins=[_Register()],
    )
    assert "test_mtu[spark-1:rail0]" in run.failed
    # HTML: sortable Node / Rail / Measured / Expected columns, cause and fix above the log.
    text = page.read_text()
    for kind, title in html.COLUMNS_TITLES:
        assert f'<th class="sortable" data-column-type="{kind}">{title}</th>' in text
    assert "col-sfmeasured" in text and "MTU 1500" in text
    assert "sparkfabric-diagnosis" in text
    assert "Likely cause:" in text and "Fix:" in text
    # JUnit: measured / expected (and the diagnosis) as properties of the test case.
    tree = ET.parse(junit)
    case = next(c for c in tree.iter("testcase") if c.get("name") == "test_mtu[spark-1:rail0]")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["node"] == "spark-1"
    assert props["measured"] == "MTU 1500"
    assert props["expected"] == "MTU 9000"
    assert props["rule"] == "mtu_mismatch"
    suite = {p.get("name"): p.get("value") for p in tree.getroot().iter("property")}
    assert suite.get("sparkfabric_topology") == "direct"


def test_runs_without_pytest_html(pytester: pytest.Pytester, mtu_fault: Path) -> None:
    run = run_suite(pytester, mtu_fault, "-p", "no:html", markers="mtu", plugins=[_Register()])
    assert "test_mtu[spark-1:rail0]" in run.failed
    assert "test_mtu[spark-2:rail0]" in run.outcomes


def test_diagnosis_box_escapes_and_orders() -> None:
    box = html.diagnosis_html(
        {"measured": "MTU <1500>", "expected": "MTU 9000", "cause": "c", "fix": "f", "rule": "r"}
    )
    assert box is not None
    assert "MTU &lt;1500&gt;" in box
    assert re.search(r"Measured.*Expected.*Likely cause.*Fix", box)
    assert html.diagnosis_html({"measured": "x"}) is None


def test_table_hooks_insert_matching_cells() -> None:
    header = ["<th>Result</th>", "<th>Test</th>", "<th>Duration</th>", "<th>Links</th>"]
    html.pytest_html_results_table_header(header)
    assert len(header) == 8 and 'data-column-type="sfnode"' in header[2]

    class Report:
        user_properties: ClassVar = [("node", "spark-1"), ("measured", "a\nb")]

    row = ["<td>r</td>", "<td>t</td>", "<td>d</td>", "<td>l</td>"]
    html.pytest_html_results_table_row(Report(), row)  # type: ignore[arg-type]
    assert row[2] == '<td class="col-sfnode">spark-1</td>'
    assert row[4] == '<td class="col-sfmeasured">a b</td>'
