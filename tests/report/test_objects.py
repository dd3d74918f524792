"""Object ids read back into what they name."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.report.objects import Point, parse


@pytest.mark.parametrize(
    ("text", "kind", "points"),
    [
        ("spark-1", "node", (Point("spark-1"),)),
        ("spark-1:p0", "port", (Point("spark-1", 0),)),
        ("spark-1:p0rail1", "rail", (Point("spark-1", 0, 1),)),
        ("spark-1:rail0", "rail", (Point("spark-1", None, 0),)),
        ("switch:qsfp56-dd-1-5", "leg", (Point(None, leg="qsfp56-dd-1-5"),)),
        (
            "a.b-1:p0rail1<->c_2:p1rail1",
            "link",
            (Point("a.b-1", 0, 1), Point("c_2", 1, 1)),
        ),
        ("x:rail0->y:rail0", "direction", (Point("x", None, 0), Point("y", None, 0))),
        ("x:p0<->y:p1", "cable", (Point("x", 0), Point("y", 1))),
        ("x:p1<->switch:qsfp56-dd-2-1", "cable", (Point("x", 1), Point(None, leg="qsfp56-dd-2-1"))),
        ("x<->y", "pair", (Point("x"), Point("y"))),
    ],
)
def test_every_id_form_names_its_objects(text: str, kind: str, points: tuple[Point, ...]) -> None:
    ref = parse(text)
    assert ref is not None
    assert (ref.kind, ref.points) == (kind, points)


def test_a_link_knows_its_rail_and_nodes() -> None:
    ref = parse("spark-1:p0rail1<->spark-2:p1rail1")
    assert ref is not None
    assert ref.rail == 1
    assert ref.nodes == ("spark-1", "spark-2")


@pytest.mark.parametrize(
    "text", ["", ":p0", "x:q0", "x:p0rail", "x:rail0<->y:p1", "x<->", "switch:", "x->y:p0"]
)
def test_text_that_is_no_object_id_reads_as_none(text: str) -> None:
    assert parse(text) is None
