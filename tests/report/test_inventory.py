"""The cable acceptance table: one row per cable, known by its serial; both ends shown once
when they agree, both when they differ; everything escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from pytest_sparkfabric.report.build import build
from pytest_sparkfabric.report.inventory import COLUMNS, html, text
from pytest_sparkfabric.report.view import CableRow, End, EndRead
from tests.report.sample import Faults, document


def _rows(table: str) -> list[list[str]]:
    root = ET.fromstring(table.replace("<br>", "<br/>"))
    return [
        ["".join(td.itertext()) for td in tr]
        for tr in root.iter("tr")
        if tr.get("class") == "sf-cable-row"
    ]


def test_one_row_per_cable_with_its_record() -> None:
    r = build(document("ring", 4, Faults(bad_cable=1), soak_minutes=1))
    table = html(r.cables)
    head = ET.fromstring(table.replace("<br>", "<br/>")).find("thead/tr")
    assert head is not None and [th.text for th in head] == list(COLUMNS)
    rows = _rows(table)
    assert len(rows) == 4
    assert rows[1] == [
        "APF00000002",
        "spark-2:p0<->spark-3:p1",
        "spark-2:p0",
        "spark-3:p1",
        "Amphenol",
        "NJAAKK-N911",
        "1 m",
        "Copper cable",
        "200G",
        "RS",
        "2.9e-05",
        "failed",
    ]
    assert rows[0][-1] == "passed"
    assert 'data-serial="APF00000002"' in table


def test_a_switch_leg_end_shows_what_it_has() -> None:
    r = build(document("switch", 2, soak_minutes=1))
    rows = _rows(html(r.cables))
    assert rows[0][:4] == [
        "APF00000001",
        "spark-1:p1<->switch:qsfp56-dd-1-1",
        "spark-1:p1",
        "switch:qsfp56-dd-1-1",
    ]
    assert rows[0][9] == "A: RSB: fec91"  # the two ends name FEC differently: both shown


def test_ends_that_disagree_are_both_shown_and_marked() -> None:
    row = CableRow(
        "a:p0<->b:p1",
        EndRead(End("a", "p0"), vendor="Amphenol", serial="S1", length_m=1.0),
        EndRead(End("b", "p1"), vendor="Luxshare", serial="S2", length_m=1.0),
        None,
        "unknown",
    )
    table = html([row])
    assert '<td class="sf-differs" title="the two ends differ">A: S1<br>B: S2</td>' in table
    assert "<td>1 m</td>" in table
    assert _rows(table)[0][-2:] == ["\u2014", "not checked"]


def test_nothing_read_shows_a_dash() -> None:
    row = CableRow("a:p0<->b:p1", EndRead(End("a", "p0")), EndRead(End("b", "p1")), None, "pass")
    assert _rows(html([row]))[0][0] == "\u2014"
    assert text([row]) == "serial unread  a:p0<->b:p1  \u2014 \u2014  BER \u2014  passed\n"


def test_values_from_the_eeprom_are_escaped() -> None:
    r = build(document("direct", 2, Faults(hostile=True), soak_minutes=1))
    table = html(r.cables)
    assert "<b>" not in table
    assert "&lt;b&gt;Amphenol&lt;/b&gt; &amp; co" in table


def test_plain_text_record() -> None:
    r = build(document("direct", 2, soak_minutes=1))
    assert text(r.cables) == (
        "APF00000001  spark-1:p1<->spark-2:p1  Amphenol NJAAKK-N911  BER 1.5e-11  passed\n"
    )
