"""The fabric picture: every node and cable drawn, colours by verdict, tooltips, escaping, and
layouts that keep node boxes apart from 2 to 70 nodes."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.report.build import End, FabricCable, FabricNode, Picture, RailState
from pytest_sparkfabric.report.build import picture as model
from pytest_sparkfabric.report.picture import cable_order, layout, render
from pytest_sparkfabric.report.style import FILL, STROKE
from pytest_sparkfabric.results import Results, Status
from tests.report.sample import Faults, document

SVG = "{http://www.w3.org/2000/svg}"
SIZES = [("direct", 2), ("mesh", 3), ("ring", 4), ("ring", 16), ("ring", 17), ("ring", 64)]
SIZES += [("switch", n) for n in (2, 3, 8, 9, 64)]


def _drawn(svg: str) -> tuple[ET.Element, dict[str, ET.Element], dict[str, ET.Element]]:
    """The picture checked well formed, inside its viewBox, its node boxes apart: the root and
    its node and cable groups by name."""
    root = ET.fromstring(svg)
    width, height = float(root.get("width", 0)), float(root.get("height", 0))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    nodes = {str(g.get("data-node")): g for g in _groups(root, "sf-node")}
    cables = {str(g.get("data-cable")): g for g in _groups(root, "sf-cable")}
    rects = [r for r in (g.find(f"{SVG}rect") for g in nodes.values()) if r is not None]
    boxes = [[float(r.get(k, "0")) for k in ("x", "y", "width", "height")] for r in rects]
    assert len(boxes) == len(nodes)
    for x, y, w, h in boxes:
        assert x >= 0 and x + w <= width and y >= 0 and y + h <= height
    for (ax, ay, aw, ah), (bx, by, bw, bh) in itertools.combinations(boxes, 2):
        assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay, "boxes overlap"
    for path in (p for g in cables.values() for p in g.iter(f"{SVG}path")):
        for x, y in _points(path.get("d", "")):
            assert -1 <= x <= width + 1 and -1 <= y <= height + 1
    return root, nodes, cables


def _groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]


def _title(el: ET.Element) -> str:
    t = el.find(f"{SVG}title")
    return t.text or "" if t is not None else ""


def _points(d: str) -> list[tuple[float, float]]:
    """The points of a path written as `Mx,y Lx,y ...`."""
    return [(float(x), float(y)) for x, y in (p.split(",") for p in d[1:].split(" L"))]


def _texts(g: ET.Element) -> list[str | None]:
    return [t.text for t in g.iter(f"{SVG}text")]


def _rails(g: ET.Element) -> dict[str, ET.Element]:
    return {str(p.get("data-rail")): p for p in g.iter(f"{SVG}path") if p.get("data-rail")}


@pytest.mark.parametrize(("topology", "n"), SIZES)
def test_every_node_and_cable_is_drawn_apart_inside_and_with_a_tooltip(
    topology: str, n: int
) -> None:
    fabric = model(document(topology, n, soak_minutes=1))
    _, nodes, cables = _drawn(render(fabric))
    assert sorted(nodes) == sorted(x.name for x in fabric.nodes)
    assert len(cables) == len(fabric.cables) == (n if topology != "direct" else 1)
    for name, g in nodes.items():
        assert _title(g).startswith(f"node {name}\npassed")
    for name, g in cables.items():
        tip = _title(g).splitlines()
        assert tip[:3] == [f"cable {name}", f"serial {tip[1][7:]}", "passed"]
        assert sorted(_rails(g)) == ["0", "1"]
        assert all(" Gb/s" in _title(p) for p in _rails(g).values())


def test_colours_follow_each_rail_and_node_verdict() -> None:
    doc = document("ring", 4, Faults(bad_cable=1, unmeasured=True), soak_minutes=1)
    _, nodes, cables = _drawn(render(model(doc)))
    bad = cables["spark-2:p0<->spark-3:p1"]
    assert bad.get("data-status") == "fail"
    strokes = {k: p.get("stroke") for k, p in _rails(bad).items()}
    assert strokes == {"0": STROKE["pass"], "1": STROKE["fail"]}
    halo = next(p for p in bad.iter(f"{SVG}path") if p.get("class") == "sf-halo")
    assert halo.get("stroke") == STROKE["fail"]
    assert cables["spark-1:p0<->spark-2:p1"].get("data-status") == "not_measured"
    spark4 = nodes["spark-4"].find(f"{SVG}rect")
    assert spark4 is not None
    assert (spark4.get("fill"), spark4.get("stroke")) == (FILL["pass"], STROKE["pass"])
    assert [b.get("data-cause") for b in _groups(bad, "sf-badge")] == ["1"]


def test_a_wrong_cable_is_drawn_where_it_runs_and_its_planned_route_left_empty() -> None:
    raw = document("ring", 4, soak_minutes=1).model_dump()
    raw["cables"][0]["found"] = "spark-1:p0<->spark-3:p1"  # planned to spark-2 port 1
    root, _, cables = _drawn(render(model(Results.model_validate(raw))))
    (cable,) = [g for g in cables.values() if g.get("data-found")]
    assert cable.get("data-cable") == "spark-1:p0<->spark-2:p1"
    assert cable.get("data-found") == "spark-1:p0 <-> spark-3:p1"
    assert cable.get("data-status") == "fail"
    wrong = "WRONG: runs spark-1:p0 <-> spark-3:p1, planned spark-1:p0 <-> spark-2:p1"
    assert wrong in _title(cable)
    assert _texts(cable) == ["wrong cable"]
    (planned,) = [p for p in root.iter(f"{SVG}path") if p.get("class") == "sf-planned"]
    assert planned.get("data-cable") == "spark-1:p0<->spark-2:p1"


def test_collateral_failures_are_dashed_and_the_culprit_solid() -> None:
    _, nodes, _ = _drawn(render(model(document("mesh", 3, Faults(throttled=0), soak_minutes=1))))
    culprit, partner = (nodes[n].find(f"{SVG}rect") for n in ("spark-1", "spark-2"))
    assert culprit is not None and partner is not None
    assert culprit.get("stroke-dasharray") is None and culprit.get("fill") == FILL["fail"]
    assert partner.get("stroke-dasharray") and partner.get("stroke") == STROKE["fail"]
    assert nodes["spark-2"].get("data-elsewhere") == "true"
    assert "explained by a root cause elsewhere" in _title(nodes["spark-2"])
    assert [b.get("data-cause") for b in _groups(nodes["spark-1"], "sf-badge")] == ["1"]


def test_names_and_values_are_escaped_and_long_names_shortened_on_the_box() -> None:
    hostile, long = "x<y&\"z'>", "gx10-rack4-slot12-east"
    note = FabricNode(hostile, "fail", ("<script>alert(1)</script>",), (1,))
    nodes = (note, FabricNode(long, "pass"))
    cid = f"{hostile}:p1<->{long}:p1"
    rails = (RailState(0, "fail", ("</title><svg>",)),)
    cable = FabricCable(cid, End(hostile, "p1"), End(long, "p1"), "fail", ("vendor <b>&",), rails)
    svg = render(Picture("direct", nodes, (cable,)))
    assert "<script>" not in svg and "<b>" not in svg and "</title><svg>" not in svg
    _, drawn, cables = _drawn(svg)
    assert "<script>alert(1)</script>" in _title(drawn[hostile])
    assert "vendor <b>&" in _title(cables[cid])
    assert _texts(drawn[long]) == [long[:16] + "\u2026"]
    assert _title(drawn[long]).startswith(f"node {long}")


def test_a_ring_is_drawn_in_cable_order_not_list_order() -> None:
    cabled = [(End(x, "p0"), End(y, "p1")) for x, y in ("ac", "cb", "bd", "da")]
    cables = tuple(FabricCable(f"{a.label}<->{b.label}", a, b, "pass") for a, b in cabled)
    fabric = Picture("ring", tuple(FabricNode(n, "pass") for n in "abcd"), cables)
    assert cable_order(fabric) == ["a", "c", "b", "d"]
    lay = layout(fabric)
    # On the circle, every cable joins neighbours: no chord crosses the middle.
    centre_x = sum(b.centre[0] for b in lay.boxes.values()) / 4
    centre_y = sum(b.centre[1] for b in lay.boxes.values()) / 4
    for (x1, y1), (x2, y2) in lay.routes.values():
        assert abs((x1 + x2) / 2 - centre_x) + abs((y1 + y2) / 2 - centre_y) > 50


def test_a_large_ring_closes_round_the_margin() -> None:
    lay = layout(model(document("ring", 17, soak_minutes=1)))
    (long_route,) = [r for r in lay.routes.values() if len(r) > 2]
    assert long_route[0][1] < long_route[1][1]  # leaves the last node downwards


def test_switch_legs_each_have_their_own_lane_and_boxes_name_port_and_leg() -> None:
    fabric = model(document("switch", 64, soak_minutes=1))
    lay = layout(fabric)
    assert lay.switch is not None
    tops = [r[-1] for r in lay.routes.values()]
    assert all(y == lay.switch.y + lay.switch.h for _, y in tops)
    assert len({x for x, _ in tops}) == 64, "two legs share a line into the switch"
    # No leg runs through a node box it does not belong to.
    for cable in fabric.cables:
        own = lay.boxes[cable.a.node or ""]
        for (x1, y1), (x2, y2) in itertools.pairwise(lay.routes[cable.id]):
            for name, box in lay.boxes.items():
                inside_x = min(x1, x2) < box.x + box.w and max(x1, x2) > box.x
                inside_y = min(y1, y2) < box.y + box.h and max(y1, y2) > box.y
                assert box is own or not (inside_x and inside_y), f"{cable.id} crosses {name}"
    root, nodes, _ = _drawn(render(model(document("switch", 2, soak_minutes=1))))
    assert _texts(nodes["spark-1"]) == ["spark-1", "p1 \u2194 qsfp56-dd-1-1"]
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
    cables = []
    for a, b in (end for i, end in enumerate(ends) if i in kept):
        status = data.draw(statuses)
        rails = tuple(RailState(r, data.draw(statuses), elsewhere=True) for r in (0, 1))
        cables.append(FabricCable(f"{a.label}<->{b.label}", a, b, status, rails=rails))
    picture = Picture(topology, nodes, tuple(cables))  # type: ignore[arg-type]
    _, drawn, lines = _drawn(render(picture))
    assert len(drawn) == n and len(lines) == len(cables)
