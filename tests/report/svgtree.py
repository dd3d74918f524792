"""Reading the report's SVG back for tests (the renderers write well-formed XML)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

NS = {"svg": "http://www.w3.org/2000/svg"}
SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]


def title(el: ET.Element) -> str:
    t = el.find("svg:title", NS)
    return t.text or "" if t is not None else ""


def rect(el: ET.Element) -> tuple[float, float, float, float]:
    r = el.find("svg:rect", NS)
    assert r is not None
    return tuple(float(r.get(k, "0")) for k in ("x", "y", "width", "height"))  # type: ignore[return-value]


def points(d: str) -> list[tuple[float, float]]:
    """The points of a path written as `Mx,y Lx,y ...`."""
    out = []
    for part in d.replace("M", "").split(" L"):
        x, y = part.split(",")
        out.append((float(x), float(y)))
    return out
