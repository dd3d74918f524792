"""The pytest-html hooks (pure): the diagnosis box and the nodes' prerequisites (the columns, the
title and the banner first on a real run: tests/suite/test_report.py, test_campaign.py)."""

from __future__ import annotations

import re

from pytest_sparkfabric.report import diagnosis_html, fragment
from tests.report.sample import document, edit


def test_diagnosis_box_escapes_and_orders() -> None:
    box = diagnosis_html(
        {"measured": "MTU <1500>", "expected": "MTU 9000", "cause": "c", "fix": "f", "rule": "r"}
    )
    assert box is not None
    assert "MTU &lt;1500&gt;" in box
    assert re.search(r"Measured.*Expected.*Likely cause.*Fix", box)
    assert diagnosis_html({"measured": "x"}) is None


def test_the_page_says_what_each_node_lacks_and_its_fix() -> None:
    why = "spark-2: iperf3: command not found (iperf3 is not installed, or not on PATH)"
    gap = {"prerequisite": "iperf3", "needed_for": "iperf3", "reason": why}
    found = {"node": "spark-1", "found": {"iperf3": "/usr/bin/iperf3"}}
    missing = {"node": "spark-2", "missing": [gap | {"fix": "sudo apt install iperf3"}]}
    doc = edit(document(), preflight=[found, missing])
    assert (
        '<section class="sf-section" id="sf-preflight"><h2>What the nodes have</h2>'
        "<table><tr><th>node</th><th>missing</th><th>fix</th></tr>"
        "<tr><td>spark-1</td><td colspan=2>nothing missing</td></tr>"
        "<tr><td>spark-2</td><td>spark-2: iperf3: command not found (iperf3 is not installed, "
        "or not on PATH)</td><td><code>sudo apt install iperf3</code></td></tr></table></section>"
    ) in fragment(doc)
    assert 'id="sf-preflight"' not in fragment(document())
