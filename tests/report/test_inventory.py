"""The cable acceptance table: one row per cable, known by its serial; both ends shown once
when they agree, both when they differ; a cable found elsewhere than planned fails; escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from pytest_sparkfabric.report.build import cable_rows
from pytest_sparkfabric.report.inventory import COLUMNS, html
from pytest_sparkfabric.results import Results
from tests.report.sample import Faults, document


def _table(doc: Results) -> str:
    return html(cable_rows(doc))


def _rows(table: str) -> list[list[str]]:
    root = ET.fromstring(table.replace("<br>", "<br/>"))
    return [
        ["".join(td.itertext()) for td in tr]
        for tr in root.iter("tr")
        if tr.get("class") == "sf-cable-row"
    ]


def _edited(doc: Results, index: int, **changes: object) -> Results:
    raw = doc.model_dump()
    for key, value in changes.items():
        end, _, field = key.partition("__")
        if field:
            raw["cables"][index][end][field] = value
        else:
            raw["cables"][index][key] = value
    return Results.model_validate(raw)


def test_one_row_per_cable_with_its_record() -> None:
    table = _table(document("ring", 4, Faults(bad_cable=1), soak_minutes=1))
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
    rows = _rows(_table(document("switch", 2, soak_minutes=1)))
    assert rows[0][:4] == [
        "APF00000001",
        "spark-1:p1<->switch:qsfp56-dd-1-1",
        "spark-1:p1",
        "switch:qsfp56-dd-1-1",
    ]
    assert rows[0][9] == "A: RSB: fec91"  # the two ends name FEC differently: both shown


def test_ends_that_disagree_are_both_shown_and_nothing_read_is_a_dash() -> None:
    doc = _edited(document("direct", 2, soak_minutes=1), 0, b__serial="S2", b__vendor="Luxshare")
    table = _table(doc)
    assert 'title="the two ends differ">A: APF00000001<br>B: S2</td>' in table
    assert "<td>1 m</td>" in table
    unread = _edited(document("direct", 2, soak_minutes=1), 0, a__serial=None, b__serial=None)
    assert _rows(_table(unread))[0][0] == "\u2014"  # nothing read: a dash


def test_a_cable_found_elsewhere_fails_and_says_where_it_runs() -> None:
    doc = _edited(document("ring", 4, soak_minutes=1), 0, found="spark-1:p0<->spark-2:p0")
    rows = _rows(_table(doc))
    assert rows[0][1] == "spark-1:p0<->spark-2:p1found: spark-1:p0<->spark-2:p0"
    assert rows[0][-1] == "failed"
    assert {r[-1] for r in rows[1:]} == {"passed"}


def test_values_from_the_eeprom_are_escaped() -> None:
    table = _table(document("direct", 2, Faults(hostile=True), soak_minutes=1))
    assert "<b>" not in table
    assert "&lt;b&gt;Amphenol&lt;/b&gt; &amp; co" in table
