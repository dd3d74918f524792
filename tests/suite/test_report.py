"""The reports of a whole run: HTML columns and diagnosis box, JUnit properties, and the suite
without pytest-html."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest

from pytest_sparkfabric.report import html
from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow


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
    )
    assert "test_mtu[spark-1:rail0]" in run.failed
    # HTML: sortable Node / Rail / Measured / Expected columns, cause and fix above the log.
    text = page.read_text()
    for kind, title in html.COLUMNS_TITLES:
        assert re.search(f'<th class="sortable" data-column-type="{kind}"[^>]*>{title}</th>', text)
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


def _html_rows(page: Path) -> dict[str, dict[str, object]]:
    """The report's rows (pytest-html 4 keeps them as JSON in the page), by test id."""
    blob = re.search(r'data-jsonblob="([^"]*)"', page.read_text())
    assert blob is not None
    tests: dict[str, list[dict[str, object]]] = json.loads(unescape(blob.group(1)))["tests"]
    return {str(rows[0]["testId"]): rows[0] for rows in tests.values()}


def test_html_report_has_no_noise(pytester: pytest.Pytester) -> None:
    cluster = write_cluster(
        pytester.path,
        "direct-2.yaml",
        faults=[{"fault": "half_port", "node": "spark-1", "rail": 1}],
    )
    page = pytester.path / "report.html"
    run_suite(
        pytester,
        cluster,
        "--html",
        str(page),
        "--self-contained-html",
        markers="bandwidth or switch",
    )
    text = page.read_text()
    rows = _html_rows(page)
    # Skipped: the test's own id, its reason as a sentence (no `::setup`, no raw tuple).
    skipped = {k: v for k, v in rows.items() if v["result"] == "Skipped"}
    assert skipped and "::setup" not in text
    for test_id, row in skipped.items():
        assert test_id.split("::")[0] in ("test_switch.py", "test_switch_traffic.py")
        assert row["log"] == (
            "Skipped: no switch: section in cluster.yaml (switch checks need its host and ports)\n"
        )
    # A failure: cause and fix once, in the box; the log keeps what was measured and expected.
    loop = next(v for k, v in rows.items() if k.endswith("test_nic_loopback[spark-1:rail1]"))
    assert loop["result"] == "Failed"
    log = str(loop["log"])
    assert log.count("Likely cause") == 1 and log.count("Fix:") == 1, log
    box, _, rest = log.partition("</div>")
    assert 'class="sparkfabric-diagnosis"' in box and "Likely cause:</b>" in box
    assert "one half carries nothing even inside the box" in box  # the evidence, too
    assert "loopback: 0.4 Gb/s, expected &gt;= 80 Gb/s" in rest
    # Node and rail never wrap; no Duration column (an item's time is not its measurement's).
    assert '<td class=\\"col-sfnode\\" style=\\"white-space:nowrap\\">spark-1</td>' in (
        json.dumps(loop)
    )
    assert 'data-column-type="duration"' not in text and "col-duration" not in text


def test_runs_without_pytest_html(pytester: pytest.Pytester, mtu_fault: Path) -> None:
    run = run_suite(pytester, mtu_fault, "-p", "no:html", markers="mtu")
    assert "test_mtu[spark-1:rail0]" in run.failed
    assert "test_mtu[spark-2:rail0]" in run.outcomes
