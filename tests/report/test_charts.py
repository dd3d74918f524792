"""Charts: inline SVG that is stable, self-contained and safe to put many of on one page, and
whose captions state what the chart marks."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import pytest_sparkfabric
from pytest_sparkfabric.report import charts
from pytest_sparkfabric.results import Results
from tests.report.sample import Faults, document, edit, plus_items

HIGHER = ("plugin", "session", "fixtures", "measure", "transport")
BEYOND_PLUGIN = tuple(
    f"pytest_sparkfabric.{m.name}"
    for m in pkgutil.iter_modules(pytest_sparkfabric.__path__)
    if m.name not in ("plugin", "session", "outcome")
)
KEYS = ["bw-rail0", "bw-rail1", "nccl-busbw", "soak-lanes", "soak-temps"]


@pytest.fixture(scope="module")
def report() -> Results:
    return document("ring", 4, Faults(bad_cable=0, hot=2), soak_minutes=4)


@pytest.fixture(scope="module")
def drawn(report: Results) -> list[charts.Chart]:
    return charts.render(report)


def test_every_chart_the_data_allows_in_reading_order(drawn: list[charts.Chart]) -> None:
    assert [c.key for c in drawn] == KEYS
    doc = document("direct", 2, soak_minutes=1)
    doc = edit(doc, measurements=[m for m in doc.measurements if m.t_s is None])
    assert [c.key for c in charts.render(doc)] == KEYS[:3]  # no soak data, no soak charts


def test_each_chart_is_one_inline_svg_element_its_ids_unique_on_the_page(
    drawn: list[charts.Chart],
) -> None:
    seen: set[str] = set()
    for c in drawn:
        assert c.svg.startswith('<svg class="sf-chart-svg" role="img" aria-label=')
        root = ET.fromstring(c.svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert root.get("aria-label") == c.title
        # No <text>: glyphs are paths, so no font is needed.
        for gone in ("<?xml", "<!DOCTYPE", "<metadata", "<style", "Matplotlib v", "<text"):
            assert gone not in c.svg, f"{c.key} keeps {gone}"
        ids = re.findall(r'\bid="([^"]+)"', c.svg)
        assert ids and all(i.startswith(f"{c.key}-") for i in ids), c.key
        assert not seen & set(ids)
        seen |= set(ids)
        refs = re.findall(r'(?:href="#|url\(#)([^")]+)', c.svg)
        assert refs and set(refs) <= set(ids), c.key


def test_the_same_data_gives_the_same_bytes_and_global_settings_are_left_alone(
    report: Results, drawn: list[charts.Chart]
) -> None:
    import matplotlib

    before = dict(matplotlib.rcParams)
    assert [c.svg for c in charts.render(report)] == [c.svg for c in drawn]
    assert dict(matplotlib.rcParams) == before


def test_heatmap_marks_cells_below_the_threshold(drawn: list[charts.Chart]) -> None:
    rail0, rail1 = drawn[0], drawn[1]
    assert "0 below it" in rail0.caption
    assert "Threshold 80 Gb/s" in rail1.caption
    assert "2 below it, outlined" in rail1.caption  # the bad cable's rail 1, both directions
    assert "12 figures" in rail1.caption  # 8 directed transfers and 4 loopbacks
    # The matrix itself is one pixel-exact image, so its size does not grow with cells.
    assert 'style="image-rendering:crisp-edges;image-rendering:pixelated"' in rail1.svg
    assert "data:image/png;base64," in rail1.svg


def test_heatmap_draws_failed_directions_without_a_figure_red_never_grey() -> None:
    doc = document("ring", 4, soak_minutes=1)
    lost, kept = "spark-1:p0rail0<->spark-2:p1rail0", "spark-2:p0rail0->spark-3:p1rail0"
    pair = {"spark-1", "spark-2"}
    gone = [
        m for m in doc.measurements if m.kind != "rdma_gbps" or m.rail or {m.node, m.peer} != pair
    ]
    items = [{"id": "t::r", "outcome": "failed", "objects": [lost]}]
    # A direction that has its figure keeps it, whatever else failed on it.
    items.append({"id": "t::x", "outcome": "not_measured", "objects": [kept]})
    rail0 = charts.matrices(edit(plus_items(doc, *items), measurements=gone))[0]
    assert rail0.lost == (("spark-1", "spark-2", "fail"), ("spark-2", "spark-1", "fail"))
    caption = charts.heatmap(rail0).caption
    assert "Red: 2 failed without a figure; amber: 0 not measured." in caption


def test_busbw_names_what_is_below_the_floor() -> None:
    chart = charts.busbw(document("direct", 2, Faults(throttled=1), soak_minutes=1))
    assert chart is not None and chart.caption == (
        "Floor 175 Gb/s (21.88 GB/s as nccl-tests print it), judged at the largest size. "
        "Below it: all_reduce_perf (marked X)."
    )
    healthy = charts.busbw(document("direct", 2, soak_minutes=1))
    assert healthy is not None and healthy.caption.endswith("All above it.")


def test_soak_captions_count_outliers_and_name_hot_nodes(drawn: list[charts.Chart]) -> None:
    lanes, temps = drawn[3], drawn[4]
    assert lanes.caption.startswith("64 lanes on 16 rails;")
    assert "red: outliers (2)" in lanes.caption
    assert temps.caption == "Hot: spark-3 (red)."


def _python(code: str) -> str:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize(
    ("code", "unloaded"),
    [
        # Loading the plugin and the report modules does not import matplotlib.
        (
            "import pytest_sparkfabric.plugin, pytest_sparkfabric.cli\n"
            "from pytest_sparkfabric.report import build, charts, picture, diff",
            ("matplotlib", "numpy", "jsonschema"),
        ),
        # The command line does not load pytest or the report.
        (
            "from pytest_sparkfabric.cli import build_parser\n"
            "build_parser().parse_args(['report', 'diff', 'a', 'b'])",
            ("pytest", "matplotlib", "jsonschema", "pytest_sparkfabric.report"),
        ),
        # The reports need neither the plugin nor the session.
        (
            "import pytest_sparkfabric.report, pytest_sparkfabric.report.build",
            tuple(f"pytest_sparkfabric.{m}" for m in HIGHER),
        ),
        # pytest loading the plugin imports none of the public face (each name on first use).
        ("import pytest_sparkfabric, pytest_sparkfabric.plugin", BEYOND_PLUGIN),
    ],
)
def test_an_import_leaves_heavy_and_higher_modules_unloaded(
    code: str, unloaded: tuple[str, ...]
) -> None:
    out = _python(
        f"import sys\n{code}\nprint(sorted(m for m in sys.modules "
        f"if any(m == u or m.startswith(u + '.') for u in {unloaded!r})))"
    )
    assert out.strip() == "[]"


def test_drawing_never_uses_pyplot_or_the_agg_renderer() -> None:
    # matplotlib's SVG backend imports the Agg module for rasterized artists; none is drawn.
    out = _python(
        "import sys\n"
        "from matplotlib.backends import backend_agg\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('Agg renderer used')\n"
        "backend_agg.RendererAgg.__init__ = refuse\n"
        "from tests.report.sample import Faults, document\n"
        "from pytest_sparkfabric.report import charts\n"
        "doc = document('ring', 4, Faults(bad_cable=0, hot=1), soak_minutes=2)\n"
        "print(len(charts.render(doc)))\n"
        "print('matplotlib.pyplot' in sys.modules)"
    )
    assert out.split() == ["5", "False"]


def _glyph_id(char: str) -> str:
    """The id matplotlib gives a DejaVu Sans glyph it writes as a path."""
    from matplotlib.font_manager import FontProperties, findfont
    from matplotlib.ft2font import FT2Font

    font = FT2Font(findfont(FontProperties(family="DejaVu Sans")))
    return f'DejaVuSans-{font.get_char_index(ord(char)):x}"'


def test_log_axis_labels_are_typeset_and_names_keep_their_dollar_signs(
    drawn: list[charts.Chart],
) -> None:
    dollar = _glyph_id("$")
    lanes = drawn[3]
    assert dollar not in lanes.svg  # 10^4, not the text "$\mathdefault{10^{4}}$"
    raw = document("direct", 2, soak_minutes=1, name="x").model_dump()
    for m in raw["measurements"]:
        if m["node"] == "spark-1":
            m["node"] = "spark$1$"
    raw["cluster"]["nodes"][0]["name"] = "spark$1$"
    doc = Results.model_validate(raw)
    heat = charts.heatmap(charts.matrices(doc)[0])
    assert dollar in heat.svg
