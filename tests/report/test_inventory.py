"""The cable acceptance table: one row per cable, known by its serial; both ends shown once
when they agree, both when they differ; a cable found elsewhere than planned fails; escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from pytest_sparkfabric.report.build import COLUMNS, cable_rows, cable_table
from pytest_sparkfabric.results import Results
from tests.report.sample import Faults, document


def _rows(doc: Results, **changes: object) -> tuple[str, list[list[str]]]:
    """The table of the document, its first cable changed (`b__serial`: end B's serial), and the
    text of its rows."""
    raw = doc.model_dump()
    for key, value in changes.items():
        end, _, field = key.partition("__")
        (raw["cables"][0][end] if field else raw["cables"][0])[field or key] = value
    table = cable_table(cable_rows(Results.model_validate(raw)))
    root = ET.fromstring(table.replace("<br>", "<br/>"))
    rows = [["".join(td.itertext()) for td in tr] for tr in root.iter("tr")]
    assert rows[0] == list(COLUMNS)
    return table, rows[1:]


def test_one_row_per_cable_with_its_record() -> None:
    table, rows = _rows(document("ring", 4, Faults(bad_cable=1), soak_minutes=1))
    assert len(rows) == 4 and rows[0][-1] == "passed"
    assert rows[1] == [
        "APF00000002", "spark-2:p0<->spark-3:p1", "spark-2:p0", "spark-3:p1", "Amphenol",
        "NJAAKK-N911", "1 m", "Copper cable", "200G", "RS", "2.9e-05", "failed",
    ]  # fmt: skip
    assert 'data-serial="APF00000002"' in table


def test_a_switch_leg_end_shows_what_it_has() -> None:
    _, rows = _rows(document("switch", 2, soak_minutes=1))
    ends = ["spark-1:p1<->switch:qsfp56-dd-1-1", "spark-1:p1", "switch:qsfp56-dd-1-1"]
    assert rows[0][:4] == ["APF00000001", *ends]
    assert rows[0][9] == "A: RSB: fec91"  # the two ends name FEC differently: both shown


def test_ends_that_disagree_are_both_shown_and_nothing_read_is_a_dash() -> None:
    doc = document("direct", 2, soak_minutes=1)
    table, _ = _rows(doc, b__serial="S2", b__vendor="Luxshare")
    assert 'title="the two ends differ">A: APF00000001<br>B: S2</td>' in table
    assert "<td>1 m</td>" in table
    assert _rows(doc, a__serial=None, b__serial=None)[1][0][0] == "\u2014"  # nothing read


def test_a_cable_found_elsewhere_fails_and_says_where_it_runs() -> None:
    _, rows = _rows(document("ring", 4, soak_minutes=1), found="spark-1:p0<->spark-2:p0")
    assert rows[0][1] == "spark-1:p0<->spark-2:p1found: spark-1:p0<->spark-2:p0"
    assert rows[0][-1] == "failed"
    assert {r[-1] for r in rows[1:]} == {"passed"}


def test_values_from_the_eeprom_are_escaped() -> None:
    table, _ = _rows(document("direct", 2, Faults(hostile=True), soak_minutes=1))
    assert "<b>" not in table
    assert "&lt;b&gt;Amphenol&lt;/b&gt; &amp; co" in table
