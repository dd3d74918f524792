"""The reports of a whole run: HTML columns and diagnosis box, JUnit properties, a baseline (the
suite without pytest-html: every fault matrix run)."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest

from pytest_sparkfabric.report import COLUMNS
from tests.report import test_browser
from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow
LOOP1 = "test_nic_loopback[spark-1:rail1]"


def _html_rows(page: Path) -> dict[str, dict[str, object]]:
    """The report's rows (pytest-html 4 keeps them as JSON in the page), by test id."""
    blob = re.search(r'data-jsonblob="([^"]*)"', page.read_text())
    assert blob is not None
    tests: dict[str, list[dict[str, object]]] = json.loads(unescape(blob.group(1)))["tests"]
    return {str(rows[0]["testId"]): rows[0] for rows in tests.values()}


def test_ids_do_not_depend_on_how_or_where_pytest_starts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = write_cluster(pytester.path, "faults/mtu.yaml", name="c.yaml")
    seen = {}
    for how in ("equals", "two words", "ini"):
        where = pytester.path / how.replace(" ", "_") / "deep"
        where.mkdir(parents=True)
        monkeypatch.chdir(where)
        if how == "ini":
            (where / "pytest.ini").write_text(f"[pytest]\nsparkfabric_cluster = {cluster}\n")
        relative = ["--cluster", os.path.relpath(cluster, where)]
        argv = {"equals": [f"--cluster={cluster}"], "ini": []}.get(how, relative)
        out, junit = where / "r.json", where / "j.xml"
        pytester.runpytest_inprocess(
            *argv, "-p", "no:cacheprovider", "-p", "no:html", "-m", "mtu",
            f"--sparkfabric-json={out}", f"--junitxml={junit}",
        )  # fmt: skip
        ids = [str(i["id"]) for i in json.loads(out.read_text())["items"]]
        cases = ET.parse(junit).iter("testcase")
        seen[how] = ids, [(str(c.get("classname")), str(c.get("name"))) for c in cases]
    assert seen["equals"] == seen["two words"] == seen["ini"]
    ids, names = seen["equals"]
    assert "test_mtu.py::test_mtu[spark-2:rail0]" in ids
    assert ("test_mtu", "test_mtu[spark-2:rail0]") in names
    # Every item once, and the verdict as its own test case last.
    assert len(names) == len(ids) + 1 and names[-1][1] == "verdict", names[-1]


def test_the_html_report_opens_with_the_verdict_has_no_noise_and_renders_in_a_browser(
    pytester: pytest.Pytester,
) -> None:
    page, junit = pytester.path / "report.html", pytester.path / "junit.xml"
    args = ["--html", str(page), "--self-contained-html", f"--junitxml={junit}"]
    half = [{"fault": "half_port", "node": "spark-1", "rail": 1}]
    cluster = write_cluster(pytester.path, "direct-2.yaml", faults=half)
    run = run_suite(pytester, cluster, *args, markers="bandwidth or switch")
    text = page.read_text()
    rows = _html_rows(page)
    # Sortable Node / Rail / Measured / Expected columns.
    for kind, title, *_ in COLUMNS:
        assert re.search(f'<th class="sortable" data-column-type="{kind}"[^>]*>{title}</th>', text)
    # JUnit: measured / expected (and the diagnosis) as properties of the test case.
    tree = ET.parse(junit)
    case = next(c for c in tree.iter("testcase") if c.get("name") == LOOP1)
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert (props["node"], props["rule"]) == ("spark-1", "half_port"), props
    assert (props["measured"], props["expected"]) == ("0.4 Gb/s", ">= 80 Gb/s"), props
    suite = {p.get("name"): p.get("value") for p in tree.getroot().iter("property")}
    assert (suite.get("sparkfabric_topology"), suite.get("sparkfabric_verdict")) == (
        "direct", "rejected"
    )  # fmt: skip
    # The verdict is a test case of its own, failed with the banner's line and each cause.
    (verdict,) = [c for c in tree.iter("testcase") if c.get("classname") == "sparkfabric"]
    failure = verdict.find("failure")
    assert verdict.get("name") == "verdict" and failure is not None
    message = failure.get("message", "")
    assert message.startswith("sparkfabric: REJECTED  cluster: direct, 2 nodes, "), message
    assert all(f"[{c['rule']}] {', '.join(c['objects'])}" in message for c in run.doc["causes"])
    # A direct cluster has no switch: its switch checks are deselected, never rows of "Skipped".
    assert "::setup" not in text
    assert not [k for k, v in rows.items() if v["result"] == "Skipped"]
    assert not [k for k in rows if k.split("::")[0].startswith("test_switch")]
    # A failure: cause and fix once, in the box; the log keeps what was measured and expected.
    loop = next(v for k, v in rows.items() if k.endswith(LOOP1))
    assert loop["result"] == "Failed"
    log = str(loop["log"])
    assert log.count("Likely cause") == 1 and log.count("Fix:") == 1, log
    box, _, rest = log.partition("</div>")
    assert 'class="sparkfabric-diagnosis"' in box and "Likely cause:</b>" in box
    assert "one half carries nothing even inside the box" in box  # the evidence, too
    assert "loopback: 0.4 Gb/s, expected &gt;= 80 Gb/s" in rest
    # Node and rail never wrap; no Duration column (an item's time is not its measurement's).
    nowrap = '<td class=\\"col-sfnode\\" style=\\"white-space:nowrap\\">spark-1</td>'
    assert nowrap in json.dumps(loop)
    assert 'data-column-type="duration"' not in text and "col-duration" not in text
    assert run.doc["verdict"] == "rejected"
    assert [c["rule"] for c in run.doc["causes"]] == ["half_port"]
    # Verdict first, then the fabric as an inline SVG, the bandwidth charts, the cables.
    order = [text.index(k) for k in ('data-verdict="rejected"', 'id="sf-fabric"', 'id="sf-charts"')]
    assert order == sorted(order)
    assert 'data-rule="half_port"' in text and "<svg" in text
    assert "REJECTED" in text and "explains" in text
    # The terminal's last lines say the same.
    tail = run.stdout[run.stdout.index("sparkfabric verdict") :]
    assert "sparkfabric: REJECTED  cluster: direct, 2 nodes" in tail
    assert "1. [half_port] spark-1:rail1: " in tail, tail
    if test_browser.CHROMIUM is None:
        pytest.skip("no chromium on PATH: the page was not opened in a browser")
    dom = test_browser.shown(pytester.path, page)
    assert '<span class="sf-verdict-word">REJECTED</span>' in dom
    assert len(re.findall(r'<svg\b[^>]*\bclass="sf-fabric"', dom)) == 1
    assert len(re.findall(r'<svg\b[^>]*\bclass="sf-chart-svg"', dom)) >= 2
    # pytest-html's own table is still there, with the same ids as the JSON results.
    assert "test_bandwidth.py::test_nic_loopback[spark-1:rail0]" in dom
    # Painted: the verdict banner near the top, above pytest-html's Environment table.
    rgb = test_browser.painted(pytester.path, page, "--window-size=1200,900")
    red = [y for y in range(0, 300, 4) if rgb.getpixel((600, y)) == test_browser.BANNER_RED]
    assert red, [rgb.getpixel((600, y)) for y in range(0, 300, 20)]


def test_baseline_fails_items_that_regressed(pytester: pytest.Pytester) -> None:
    cluster = write_cluster(pytester.path, "direct-2.yaml")
    junit = pytester.path / "junit.xml"
    first = run_suite(
        pytester, cluster, f"--junitxml={junit}", markers="bandwidth", files=["test_bandwidth.py"]
    )
    assert first.doc["verdict"] == "accepted"
    tree = ET.parse(junit)  # accepted: the verdict's test case passed
    (verdict,) = [c for c in tree.iter("testcase") if c.get("classname") == "sparkfabric"]
    said = {p.get("name"): p.get("value") for p in tree.iter("property")}
    assert verdict.find("failure") is None and said["sparkfabric_verdict"] == "accepted"
    # An earlier run that measured half again as much on every rail link.
    old = json.loads(json.dumps(first.doc))
    for item in old["items"]:
        if "test_rail_rdma" in item["id"]:
            item["measured"] = float(item["measured"]) * 1.5
    for m in old["measurements"]:
        if m["kind"] == "rdma_gbps":
            m["value"] *= 1.5
    base = pytester.path / "old.json"
    base.write_text(json.dumps(old))
    page = pytester.path / "report.html"
    second = run_suite(
        pytester, cluster, f"--sparkfabric-baseline={base}", "--html", str(page),
        "--self-contained-html", markers="bandwidth", files=["test_bandwidth.py"],
    )  # fmt: skip
    regressed = {k for k, v in second.messages.items() if "regressed against the baseline" in v}
    assert regressed and regressed == {k for k in second.failed if k.startswith("test_rail_rdma")}
    assert second.ret == 1 and second.doc["verdict"] == "rejected"
    causes = [(c["rule"], c["objects"]) for c in second.doc["causes"]]
    # One cause per rail link that regressed, each on its link.
    assert causes == [
        ("baseline_regression", [f"spark-1:rail{r}<->spark-2:rail{r}"]) for r in (0, 1)
    ], causes
    text = page.read_text()
    assert 'id="sf-baseline"' in text and 'data-regression="true"' in text
