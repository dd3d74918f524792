"""The fabric as cabled, one inline SVG: direct side by side, ring and mesh on a circle in cable
order (a serpentine of rows over 16 nodes), switch as a bar over a grid, a lane per leg; each
cable a stroke per rail over a halo, a tooltip of its figures, a badge per root cause on it."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pytest_sparkfabric.report.build import FabricCable, FabricNode, Picture
from pytest_sparkfabric.report.style import FILL, LABEL, STROKE, esc, f1
from pytest_sparkfabric.results import Status, worst

BOX_W, BOX_H = 132, 42
GAP_X, GAP_Y = 56, 70
MARGIN, LEGEND_H, BAR_H = 36, 40, 30
CIRCLE_MAX, ROW = 16, 8
MIN_WIDTH = 820.0
PORT_LABEL_MIN = 48.0
NAME_CHARS, SECOND_CHARS = 17, 21
ELSEWHERE = " (explained by a root cause elsewhere)"
RAIL_OFFSET = 2.5
DASH = ' stroke-dasharray="7 4"'
AWAY = ' data-elsewhere="true"'  # what a root cause elsewhere explains is marked, and drawn dashed
PLANNED = " planned"  # key of the plan's route of a wrong cable, drawn faint under the real one

Pt = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Box:
    x: float
    y: float
    w: float = BOX_W
    h: float = BOX_H

    @property
    def centre(self) -> Pt:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def edge_towards(self, p: Pt) -> Pt:
        """Where the line from the centre to p leaves the box."""
        cx, cy = self.centre
        dx, dy = p[0] - cx, p[1] - cy
        if dx == 0 and dy == 0:
            return (cx, cy)
        scale = min(
            (self.w / 2) / abs(dx) if dx else math.inf, (self.h / 2) / abs(dy) if dy else math.inf
        )
        return (cx + dx * scale, cy + dy * scale)


Boxes = dict[str, Box]


@dataclass(frozen=True, slots=True)
class Layout:
    boxes: Boxes
    routes: dict[str, tuple[Pt, ...]]
    width: float
    height: float
    switch: Box | None = None


def cable_order(fabric: Picture) -> list[str]:
    """Nodes in the order the cables join them, the rest in cluster.yaml order."""
    names = [n.name for n in fabric.nodes]
    nbrs: dict[str, list[str]] = {n: [] for n in names}
    for c in fabric.cables:
        if c.a.node in nbrs and c.b.node in nbrs and c.a.node != c.b.node:
            nbrs[c.a.node].append(c.b.node)
            nbrs[c.b.node].append(c.a.node)
    order: list[str] = []
    for start in names:
        here: str | None = start
        while here is not None and here not in order:
            order.append(here)
            here = next((n for n in nbrs[here] if n not in order), None)
    return order


def _place(order: list[str], *, grid: bool, snake: bool = True, gap_x: float = GAP_X) -> Boxes:
    """Boxes side by side (two nodes), on a circle, or on a grid of rows (a serpentine)."""
    n, boxes = len(order), {}
    if n <= 2 and not grid:
        return {name: Box(i * (BOX_W + 4 * GAP_X), 0.0) for i, name in enumerate(order)}
    for i, name in enumerate(order):
        row, col = divmod(i, ROW)
        col = ROW - 1 - col if snake and row % 2 else col
        boxes[name] = Box(col * (BOX_W + gap_x), row * (BOX_H + GAP_Y))
        if not grid:
            # Neighbouring centres at least a box width plus a gap apart along the chord.
            radius = max(150.0, (BOX_W + 50) / (2 * math.sin(math.pi / n)))
            angle = 2 * math.pi * i / n
            cx, cy = radius * math.sin(angle), -radius * math.cos(angle)
            boxes[name] = Box(cx - BOX_W / 2, cy - BOX_H / 2)
    return boxes


def _adjacent(a: Box, b: Box) -> bool:
    """Two grid neighbours (same row or column, next cell) see each other in a straight line."""
    same_row = a.y == b.y and abs(a.x - b.x) <= a.w + 2 * GAP_X
    return same_row or (a.x == b.x and abs(a.y - b.y) <= a.h + GAP_Y)


def layout(fabric: Picture) -> Layout:
    names = [n.name for n in fabric.nodes]
    if fabric.topology == "switch":
        return _switch_layout(fabric, names)
    order = cable_order(fabric) if fabric.topology in ("ring", "mesh") else names
    grid = len(order) > CIRCLE_MAX
    boxes = _place(order, grid=grid)
    # Room on the left for the closing cable of a serpentine; the legend on top; a small
    # cluster centred in a picture as wide as the legend.
    x0 = min((b.x for b in boxes.values()), default=0.0)
    x1 = max((b.x + b.w for b in boxes.values()), default=0.0)
    y0 = min((b.y for b in boxes.values()), default=0.0)
    left_room = MARGIN + (24.0 if grid else 0.0)
    width = max(MIN_WIDTH, x1 - x0 + left_room + MARGIN)
    left_room = max(left_room, (width - (x1 - x0)) / 2)
    dx, dy = left_room - x0, MARGIN + LEGEND_H - y0
    boxes = {n: replace(b, x=b.x + dx, y=b.y + dy) for n, b in boxes.items()}
    bottom = max((b.y + b.h for b in boxes.values()), default=0.0)
    lane_y = bottom + GAP_Y / 2
    routes: dict[str, tuple[Pt, ...]] = {}
    ends = [(c.id, c.a, c.b) for c in fabric.cables]
    ends += [(c.id + PLANNED, *c.planned) for c in fabric.cables if c.planned]
    for key, ea, eb in ends:
        a, b = boxes.get(ea.node or ""), boxes.get(eb.node or "")
        if a is None or b is None or a is b:
            continue
        routes[key] = (a.edge_towards(b.centre), b.edge_towards(a.centre))
        if grid and not _adjacent(a, b):
            # From a's bottom down to the margin below every row, left, up, into b's left side.
            ax, ay, by = a.x + a.w / 2, a.y + a.h, b.centre[1]
            routes[key] = ((ax, ay), (ax, lane_y), (MARGIN, lane_y), (MARGIN, by), (b.x, by))
    return Layout(boxes, routes, width, (lane_y if grid else bottom) + MARGIN)


def _switch_layout(fabric: Picture, names: list[str]) -> Layout:
    lane_w = 9.0
    gap_x = max(GAP_X, 24 + lane_w * max(1, math.ceil(len(names) / ROW)))
    top = MARGIN + LEGEND_H + BAR_H + GAP_Y
    grid = _place(names, grid=True, snake=False, gap_x=gap_x).items()
    boxes = {n: replace(b, x=b.x + MARGIN + gap_x / 2, y=b.y + top) for n, b in grid}
    width = max(MIN_WIDTH, max((b.x + b.w for b in boxes.values()), default=0.0) + MARGIN)
    bar = Box(MARGIN, MARGIN + LEGEND_H, width - 2 * MARGIN, BAR_H)
    bar_bottom = bar.y + bar.h
    routes: dict[str, tuple[Pt, ...]] = {}
    for c in fabric.cables:
        box = boxes.get((c.a.node if c.a.node is not None else c.b.node) or "")
        if box is None:
            continue
        row, x = round((box.y - top) / (BOX_H + GAP_Y)), box.x + box.w / 2
        routes[c.id] = ((x, box.y), (x, bar_bottom))
        if row:  # along the gutter above its row, then up its own lane left of the boxes
            channel, lane = box.y - GAP_Y / 2, box.x - 12 - lane_w * (row - 1)
            routes[c.id] = ((x, box.y), (x, channel), (lane, channel), (lane, bar_bottom))
    height = max((b.y + b.h for b in boxes.values()), default=top) + MARGIN
    return Layout(boxes, routes, width, height, bar)


def _path(points: tuple[Pt, ...]) -> str:
    return "M" + " L".join(f"{f1(x)},{f1(y)}" for x, y in points)


def _state(status: Status, elsewhere: bool) -> str:
    return LABEL[status] + (ELSEWHERE if elsewhere else "")


def _tip(*lines: str) -> str:
    return f"<title>{esc(chr(10).join(lines))}</title>"


def _text(cls: str, x: float, y: float, attrs: str, text: str) -> str:
    """Text over the lines (a white outline keeps it readable)."""
    return (
        f'<text class="{cls}" x="{f1(x)}" y="{f1(y)}" {attrs} stroke="#fff" stroke-width="3" '
        f'paint-order="stroke">{esc(text)}</text>'
    )


def _badges(numbers: tuple[int, ...], x: float, y: float) -> str:
    return "".join(
        f'<g class="sf-badge" data-cause="{n}"><circle cx="{f1(x + i * 17)}" cy="{f1(y)}" r="8" '
        f'fill="{STROKE["fail"]}"/><text x="{f1(x + i * 17)}" y="{f1(y + 3.5)}" '
        f'text-anchor="middle" font-size="10" font-weight="bold" fill="#fff">{n}</text></g>'
        for i, n in enumerate(numbers)
    )


def _planned(c: FabricCable, route: tuple[Pt, ...] | None) -> str:
    """Where a wrong cable should run: a faint dashed line the real one leaves empty."""
    if c.planned is None or route is None:
        return ""
    where = f"{c.planned[0].label} <-> {c.planned[1].label}"
    return (
        f'<path class="sf-planned" data-cable="{esc(c.id)}" d="{_path(route)}" fill="none" '
        f'stroke="#9e9e9e" stroke-width="2"{DASH}>'
        f"{_tip(f'planned: {where}', 'no cable runs here')}</path>"
    )


def _cable(c: FabricCable, route: tuple[Pt, ...]) -> str:
    found, tip = f"{c.a.label} <-> {c.b.label}", [f"cable {c.id}"]
    if c.planned is not None:
        tip.append(f"WRONG: runs {found}, planned {c.planned[0].label} <-> {c.planned[1].label}")
    tip += [f"serial {c.serial}"] if c.serial else []
    tip += [_state(c.status, c.elsewhere), *c.notes, *(f"root cause {n}" for n in c.causes)]
    found_attr = f' data-found="{esc(found)}"' if c.planned is not None else ""
    out = (
        f'<g class="sf-cable" data-cable="{esc(c.id)}" data-status="{c.status}"'
        f"{AWAY if c.elsewhere else ''}{found_attr}>{_tip(*tip)}"
        f'<path class="sf-halo" d="{_path(route)}" fill="none" stroke="{STROKE[c.status]}" '
        'stroke-opacity="0.25" stroke-width="9" stroke-linejoin="round"/>'
    )
    if not c.rails:
        out += (
            f'<path class="sf-rail" d="{_path(route)}" fill="none" stroke="{STROKE[c.status]}" '
            f'stroke-width="3"{DASH if c.elsewhere else ""}/>'
        )
    (x1, y1), (x2, y2) = route[0], route[1]
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    for i, r in enumerate(c.rails):
        # The route moved d to one side: a line along its normal, an orthogonal route
        # diagonally (which moves each of its segments sideways by d).
        d = (i - (len(c.rails) - 1) / 2) * 2 * RAIL_OFFSET
        nx, ny = -(y2 - y1) / length * d, (x2 - x1) / length * d
        moved = tuple((x + nx, y + ny) if len(route) == 2 else (x + d, y + d) for x, y in route)
        out += (
            f'<path class="sf-rail" data-rail="{r.rail}" data-status="{r.status}" '
            f'd="{_path(moved)}" fill="none" stroke="{STROKE[r.status]}" '
            f'stroke-width="2.5"{DASH if r.elsewhere else ""}>'
            f"{_tip(f'{c.id} rail {r.rail}', _state(r.status, r.elsewhere), *r.notes)}</path>"
        )
    mx, my = route[len(route) // 2] if len(route) > 2 else ((x1 + x2) / 2, (y1 + y2) / 2)
    if c.planned is not None:
        wrong = f'text-anchor="middle" font-size="11" font-weight="bold" fill="{STROKE["fail"]}"'
        out += _text("sf-wrong", mx, my + 18, wrong, "wrong cable")
    return out + _badges(c.causes, mx + 10, my - 10) + "</g>"


def _port_labels(c: FabricCable, route: tuple[Pt, ...]) -> str:
    """The port number at each node end, just off the box along the cable."""
    out = []
    for end, (p, q) in ((c.a, (route[0], route[1])), (c.b, (route[-1], route[-2]))):
        dx, dy = q[0] - p[0], q[1] - p[1]
        length = math.hypot(dx, dy) or 1.0
        if end.node is None or (length < PORT_LABEL_MIN and len(route) == 2):
            continue  # a switch leg, or no room for two labels: the tooltip names the ports
        ux, uy = dx / length, dy / length
        # Along the cable off the box, then to its side (above a level cable), off the stroke.
        side = -1.0 if uy <= 0.1 else 1.0
        x, y = p[0] + ux * 16 - uy * 10 * side, p[1] + uy * 16 + ux * 10 * side + 4
        attrs = 'font-size="11" text-anchor="middle" fill="#212121"'
        out.append(_text("sf-port", x, y, attrs, end.port))
    return "".join(out)


def _node(n: FabricNode, box: Box, second: str) -> str:
    causes = (f"root cause {k}" for k in n.causes)
    tip = _tip(f"node {n.name}", _state(n.status, n.elsewhere), *n.notes, *causes)
    cx, fill = f1(box.x + box.w / 2), "#ffffff" if n.elsewhere else FILL[n.status]
    name, second = (
        t if len(t) <= k else t[: k - 1] + "\u2026"
        for t, k in ((n.name, NAME_CHARS), (second, SECOND_CHARS))
    )
    text = (
        f'<text x="{cx}" y="{f1(box.y + (17 if second else 26))}" text-anchor="middle" '
        f'font-size="13" font-weight="bold" fill="#212121">{esc(name)}</text>'
    )
    if second:
        text += (
            f'<text x="{cx}" y="{f1(box.y + 33)}" text-anchor="middle" font-size="10" '
            f'fill="#424242">{esc(second)}</text>'
        )
    return (
        f'<g class="sf-node" data-node="{esc(n.name)}" data-status="{n.status}"'
        f"{AWAY if n.elsewhere else ''}>{tip}"
        f'<rect x="{f1(box.x)}" y="{f1(box.y)}" width="{f1(box.w)}" height="{f1(box.h)}" rx="6" '
        f'fill="{fill}" stroke="{STROKE[n.status]}" stroke-width="2"'
        f"{DASH if n.elsewhere else ''}/>"
        f"{text}{_badges(n.causes, box.x + box.w - 2, box.y - 2)}</g>"
    )


def _legend() -> str:
    x, y = float(MARGIN), MARGIN - 12
    out = '<g class="sf-legend" font-size="11" fill="#333">'
    for status in ("pass", "fail", "not_measured", "unknown"):
        out += (
            f'<rect x="{f1(x)}" y="{y - 4}" width="22" height="5" fill="{STROKE[status]}"/>'
            f'<text x="{f1(x + 28)}" y="{y + 2}">{LABEL[status]}</text>'
        )
        x += 48 + 6.5 * len(LABEL[status])
    return out + (
        f'<path d="M{f1(x)},{y - 1.5} h22" stroke="{STROKE["fail"]}" stroke-width="2.5"'
        f'{DASH}/><text x="{f1(x + 28)}" y="{y + 2}">failed, explained by a root cause '
        f'elsewhere</text><text x="{MARGIN}" y="{y + 18}">Cables as found (LLDP); grey dashed: '
        "where the plan runs a wrong cable. Badges: the root causes above. Hover for measured "
        "values.</text></g>"
    )


def render(fabric: Picture) -> str:
    """An <svg> element (no XML prolog), for inline use in HTML."""
    lay = layout(fabric)
    nodes = {n.name: n for n in fabric.nodes}
    w, h = f1(lay.width), f1(lay.height)
    out = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sf-fabric" data-topology='
        f'"{esc(fabric.topology)}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
        f'font-family="DejaVu Sans, Verdana, sans-serif">'
        f"{_tip(f'{fabric.topology} fabric, {len(fabric.nodes)} nodes')}{_legend()}"
    )
    if (sw := lay.switch) is not None:
        legs, name = [c.status for c in fabric.cables], f"switch {fabric.switch or ''}".rstrip()
        out += (
            f'<g class="sf-switch" data-status="{worst(legs)}">{_tip(name, f"{len(legs)} legs")}'
            f'<rect x="{f1(sw.x)}" y="{f1(sw.y)}" width="{f1(sw.w)}" height="{f1(sw.h)}" '
            f'rx="4" fill="#eceff1" stroke="#455a64" stroke-width="2"/>'
            f'<text x="{f1(sw.x + 10)}" y="{f1(sw.y + 20)}" font-size="13" font-weight="bold" '
            f'fill="#263238">{esc(name)}</text></g>'
        )
    out += "".join(_planned(c, lay.routes.get(c.id + PLANNED)) for c in fabric.cables)
    drawn = [(c, r) for c in fabric.cables if (r := lay.routes.get(c.id))]
    out += "".join(_cable(c, r) for c, r in drawn)
    if fabric.topology != "switch":
        out += "".join(_port_labels(c, r) for c, r in drawn)
    second: dict[str, str] = {}
    for c in fabric.cables if fabric.topology == "switch" else ():
        own, leg = (c.a, c.b) if c.b.node is None else (c.b, c.a)
        if own.node is not None and leg.node is None:
            second[own.node] = f"{own.port} \u2194 {leg.port}"
    out += "".join(_node(nodes[n], box, second.get(n, "")) for n, box in lay.boxes.items())
    return out + "</svg>"
