"""The fabric picture: every node and cable drawn, colours by verdict, tooltips, escaping, and
layouts that keep node boxes apart from 2 to 64 nodes."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.report.build import (
    End,
    FabricCable,
    FabricNode,
    Picture,
    RailState,
    picture,
)
from pytest_sparkfabric.report.picture import cable_order, layout, render
from pytest_sparkfabric.report.style import FILL, STROKE
from pytest_sparkfabric.results import Results, Status
from tests.report.sample import Faults, document

SIZES = [
    ("direct", 2),
    ("mesh", 3),
    ("ring", 4),
    ("ring", 8),
    ("ring", 16),
    ("ring", 17),
    ("ring", 64),
    ("switch", 2),
    ("switch", 3),
    ("switch", 4),
    ("switch", 8),
    ("switch", 9),
    ("switch", 64),
]


NS = {"svg": "http://www.w3.org/2000/svg"}
SVG = "{http://www.w3.org/2000/svg}"


def _groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]


def _title(el: ET.Element) -> str:
    t = el.find("svg:title", NS)
    return t.text or "" if t is not None else ""


def _rect(el: ET.Element) -> tuple[float, float, float, float]:
    r = el.find("svg:rect", NS)
    assert r is not None
    x, y, w, h = (float(r.get(k, "0")) for k in ("x", "y", "width", "height"))
    return x, y, w, h


def _points(d: str) -> list[tuple[float, float]]:
    """The points of a path written as `Mx,y Lx,y ...`."""
    return [(float(x), float(y)) for x, y in (p.split(",") for p in d[1:].split(" L"))]


def _fabric(topology: str, n: int, faults: Faults | None = None) -> Picture:
    return picture(document(topology, n, faults, soak_minutes=1))


@pytest.mark.parametrize(("topology", "n"), SIZES)
def test_every_node_and_cable_is_drawn_apart_inside_and_with_a_tooltip(
    topology: str, n: int
) -> None:
    fabric = _fabric(topology, n)
    root = ET.fromstring(render(fabric))
    width, height = float(root.get("width", 0)), float(root.get("height", 0))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    nodes = _groups(root, "sf-node")
    assert [g.get("data-node") for g in sorted(nodes, key=lambda g: g.get("data-node", ""))] == (
        sorted(x.name for x in fabric.nodes)
    )
    boxes = [_rect(g) for g in nodes]
    for x, y, w, h in boxes:
        assert x >= 0 and x + w <= width and y >= 0 and y + h <= height
    for (ax, ay, aw, ah), (bx, by, bw, bh) in itertools.combinations(boxes, 2):
        assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay, "boxes overlap"
    cables = _groups(root, "sf-cable")
    assert len(cables) == len(fabric.cables) == (n if topology != "direct" else 1)
    for g in cables:
        for path in g.iter(f"{SVG}path"):
            for x, y in _points(path.get("d", "")):
                assert -1 <= x <= width + 1 and -1 <= y <= height + 1
    for g in nodes:
        assert _title(g).startswith(f"node {g.get('data-node')}\npassed")
    for g in _groups(root, "sf-cable"):
        tip = _title(g).splitlines()
        assert tip[:3] == [f"cable {g.get('data-cable')}", f"serial {tip[1][7:]}", "passed"]
        rails = [p for p in g.iter(f"{SVG}path") if p.get("data-rail") is not None]
        assert sorted(p.get("data-rail", "") for p in rails) == ["0", "1"]
        assert all(" Gb/s" in _title(p) for p in rails)


def test_colours_follow_each_rail_and_node_verdict() -> None:
    fabric = _fabric("ring", 4, Faults(bad_cable=1, unmeasured=True))
    root = ET.fromstring(render(fabric))
    cables = {g.get("data-cable"): g for g in _groups(root, "sf-cable")}
    bad = cables["spark-2:p0<->spark-3:p1"]
    assert bad.get("data-status") == "fail"
    strokes = {
        p.get("data-rail"): p.get("stroke")
        for p in bad.iter(f"{SVG}path")
        if p.get("data-rail") is not None
    }
    assert strokes == {"0": STROKE["pass"], "1": STROKE["fail"]}
    halo = next(p for p in bad.iter(f"{SVG}path") if p.get("class") == "sf-halo")
    assert halo.get("stroke") == STROKE["fail"]
    first = cables["spark-1:p0<->spark-2:p1"]
    assert first.get("data-status") == "not_measured"
    nodes = {g.get("data-node"): g for g in _groups(root, "sf-node")}
    spark4 = nodes["spark-4"].find("svg:rect", NS)
    assert spark4 is not None
    assert (spark4.get("fill"), spark4.get("stroke")) == (FILL["pass"], STROKE["pass"])
    badges = [b.get("data-cause") for b in _groups(bad, "sf-badge")]
    assert badges == ["1"]


def test_a_wrong_cable_is_drawn_where_it_runs_and_its_planned_route_left_empty() -> None:
    raw = document("ring", 4, soak_minutes=1).model_dump()
    raw["cables"][0]["found"] = "spark-1:p0<->spark-3:p1"  # planned to spark-2 port 1
    root = ET.fromstring(render(picture(Results.model_validate(raw))))
    cable = next(g for g in _groups(root, "sf-cable") if g.get("data-found"))
    assert cable.get("data-cable") == "spark-1:p0<->spark-2:p1"
    assert cable.get("data-found") == "spark-1:p0 <-> spark-3:p1"
    assert cable.get("data-status") == "fail"
    assert "WRONG: runs spark-1:p0 <-> spark-3:p1, planned spark-1:p0 <-> spark-2:p1" in (
        _title(cable)
    )
    assert [t.text for t in cable.iter(f"{SVG}text")] == ["wrong cable"]
    (planned,) = [p for p in root.iter(f"{SVG}path") if p.get("class") == "sf-planned"]
    assert planned.get("data-cable") == "spark-1:p0<->spark-2:p1"


def test_collateral_failures_are_dashed_and_the_culprit_solid() -> None:
    root = ET.fromstring(render(_fabric("mesh", 3, Faults(throttled=0))))
    nodes = {g.get("data-node"): g for g in _groups(root, "sf-node")}
    culprit = nodes["spark-1"].find("svg:rect", NS)
    partner = nodes["spark-2"].find("svg:rect", NS)
    assert culprit is not None and partner is not None
    assert culprit.get("stroke-dasharray") is None and culprit.get("fill") == FILL["fail"]
    assert partner.get("stroke-dasharray") and partner.get("stroke") == STROKE["fail"]
    assert nodes["spark-2"].get("data-elsewhere") == "true"
    assert "explained by a root cause elsewhere" in _title(nodes["spark-2"])
    assert [b.get("data-cause") for b in _groups(nodes["spark-1"], "sf-badge")] == ["1"]


def test_names_and_values_are_escaped() -> None:
    hostile = "x<y&\"z'>"
    fabric = Picture(
        "direct",
        (
            FabricNode(hostile, "fail", ("<script>alert(1)</script>",), (1,)),
            FabricNode("b", "pass"),
        ),
        (
            FabricCable(
                f"{hostile}:p1<->b:p1",
                End(hostile, "p1"),
                End("b", "p1"),
                "fail",
                ("vendor <b>&amp;",),
                (RailState(0, "fail", ("</title><svg>",)),),
            ),
        ),
    )
    svg = render(fabric)
    assert "<script>" not in svg and "<b>" not in svg and "</title><svg>" not in svg
    root = ET.fromstring(svg)
    node = next(g for g in _groups(root, "sf-node") if g.get("data-node") == hostile)
    assert "<script>alert(1)</script>" in _title(node)
    cable = _groups(root, "sf-cable")[0]
    assert cable.get("data-cable") == f"{hostile}:p1<->b:p1"
    assert "vendor <b>&amp;" in _title(cable)


def test_long_names_are_shortened_on_the_box_but_whole_in_the_tooltip() -> None:
    name = "gx10-rack4-slot12-east"
    fabric = Picture(
        "direct",
        (FabricNode(name, "pass"), FabricNode("b", "pass")),
        (FabricCable("c", End(name, "p0"), End("b", "p0"), "pass"),),
    )
    root = ET.fromstring(render(fabric))
    node = _groups(root, "sf-node")[0]
    texts = [t.text for t in node.iter(f"{SVG}text")]
    assert texts == [name[:16] + "\u2026"]
    assert _title(node).startswith(f"node {name}")


def test_a_ring_is_drawn_in_cable_order_not_list_order() -> None:
    names = ["a", "b", "c", "d"]
    cabled = [("a", "c"), ("c", "b"), ("b", "d"), ("d", "a")]
    fabric = Picture(
        "ring",
        tuple(FabricNode(n, "pass") for n in names),
        tuple(
            FabricCable(f"{x}:p0<->{y}:p1", End(x, "p0"), End(y, "p1"), "pass") for x, y in cabled
        ),
    )
    assert cable_order(fabric) == ["a", "c", "b", "d"]
    lay = layout(fabric)
    # On the circle, every cable joins neighbours: no chord crosses the middle.
    centre_x = sum(b.centre[0] for b in lay.boxes.values()) / 4
    centre_y = sum(b.centre[1] for b in lay.boxes.values()) / 4
    for route in lay.routes.values():
        (x1, y1), (x2, y2) = route
        mid = ((x1 + x2) / 2 - centre_x, (y1 + y2) / 2 - centre_y)
        assert abs(mid[0]) + abs(mid[1]) > 50


def test_a_large_ring_closes_round_the_margin() -> None:
    lay = layout(_fabric("ring", 17))
    long_routes = [r for r in lay.routes.values() if len(r) > 2]
    assert len(long_routes) == 1
    assert long_routes[0][0][1] < long_routes[0][1][1]  # leaves the last node downwards


def test_switch_legs_each_have_their_own_lane() -> None:
    fabric = _fabric("switch", 64)
    lay = layout(fabric)
    assert lay.switch is not None
    tops = [r[-1] for r in lay.routes.values()]
    assert all(y == lay.switch.y + lay.switch.h for _, y in tops)
    assert len({x for x, _ in tops}) == 64, "two legs share a line into the switch"
    # No leg runs through a node box it does not belong to.
    for cable in fabric.cables:
        route = lay.routes[cable.id]
        own = lay.boxes[cable.a.node or ""]
        for (x1, y1), (x2, y2) in itertools.pairwise(route):
            for name, box in lay.boxes.items():
                if box is own:
                    continue
                inside_x = min(x1, x2) < box.x + box.w and max(x1, x2) > box.x
                inside_y = min(y1, y2) < box.y + box.h and max(y1, y2) > box.y
                assert not (inside_x and inside_y), f"{cable.id} crosses {name}"


def test_switch_boxes_name_the_port_and_leg() -> None:
    root = ET.fromstring(render(_fabric("switch", 2)))
    node = _groups(root, "sf-node")[0]
    texts = [t.text for t in node.iter(f"{SVG}text")]
    assert texts == ["spark-1", "p1 \u2194 qsfp56-dd-1-1"]
    (switch,) = _groups(root, "sf-switch")
    assert _title(switch) == "switch 192.168.88.1\n2 legs"


@settings(max_examples=40, deadline=None)
@given(
    topology=st.sampled_from(["direct", "mesh", "ring", "switch"]),
    n=st.integers(2, 70),
    data=st.data(),
)
def test_any_fabric_draws_well_formed_with_boxes_apart(
    topology: str, n: int, data: st.DataObject
) -> None:
    n = {"direct": 2, "mesh": 3}.get(topology, n)
    statuses: st.SearchStrategy[Status] = st.sampled_from(get_args(Status))
    names = [f"n{i}" for i in range(n)]
    nodes = tuple(
        FabricNode(x, data.draw(statuses), causes=(1,) * (i % 2)) for i, x in enumerate(names)
    )
    if topology == "switch":
        ends = [(End(x, "p1"), End(None, f"leg-{i}")) for i, x in enumerate(names)]
    elif topology == "direct":
        ends = [(End(names[0], "p0"), End(names[1], "p0"))]
    else:
        order = data.draw(st.permutations(names))  # cabled in any order, even not as listed
        ends = [(End(order[i], "p0"), End(order[(i + 1) % n], "p1")) for i in range(n)]
    kept = data.draw(st.lists(st.sampled_from(range(len(ends))), unique=True))
    cables = tuple(
        FabricCable(
            f"{a.label}<->{b.label}",
            a,
            b,
            data.draw(statuses),
            rails=tuple(RailState(r, data.draw(statuses), elsewhere=True) for r in (0, 1)),
        )
        for i, (a, b) in enumerate(ends)
        if i in kept
    )
    root = ET.fromstring(render(Picture(topology, nodes, cables)))  # type: ignore[arg-type]
    boxes = [_rect(g) for g in _groups(root, "sf-node")]
    assert len(boxes) == n
    assert len(_groups(root, "sf-cable")) == len(cables)
    for (ax, ay, aw, ah), (bx, by, bw, bh) in itertools.combinations(boxes, 2):
        assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
