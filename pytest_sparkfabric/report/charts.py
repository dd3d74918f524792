"""Static charts as inline SVG, drawn with matplotlib's SVG backend (never Agg, never pyplot).

matplotlib is imported only when a chart is drawn, so loading the plugin stays cheap. Output is
stable: glyphs are written as paths from the DejaVu Sans font matplotlib ships (no font needed
in the browser, the same shapes everywhere), ids come from a fixed hash salt and are prefixed
per chart (many SVGs share one page), and the date and creator metadata are left out.
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from pytest_sparkfabric.report.style import STROKE, esc, number, size_bytes
from pytest_sparkfabric.report.view import (
    BandwidthMatrix,
    LaneSeries,
    NcclChart,
    Report,
    Soak,
    TempSeries,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "path",
    "svg.hashsalt": "sparkfabric",
    "svg.image_inline": True,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "path.simplify": True,
}
ZERO_PER_S = 0.1
"""Where a lane rate of zero is drawn on the log axis."""
ANNOTATE_MAX = 10
"""Heatmaps of at most this many nodes print each cell's value."""
LABELLED_MAX = 8
"""At most this many series get their own colour and legend entry; the rest are grey."""
FAIL = STROKE["fail"]
P = ParamSpec("P")
R = TypeVar("R")
QUIET = "#90a4ae"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
"""matplotlib's tab10 without its red (red marks what is out of line) and grey (the quiet)."""


@dataclass(frozen=True, slots=True)
class Chart:
    key: str
    title: str
    caption: str
    svg: str


def _plain(text: object) -> str:
    """A name as a label: matplotlib reads `$...$` as math, and names come from cluster.yaml
    and tool output."""
    return str(text).replace("$", r"\$")


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def _styled(draw: Callable[P, R]) -> Callable[P, R]:
    """Draw under RC (figures read the settings as they are made, not only when saved)."""

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with _style():
            return draw(*args, **kwargs)

    return wrapper


def _figure(width_in: float, height_in: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in), layout="constrained")


def _inline(svg: str, key: str, title: str) -> str:
    """matplotlib's SVG file as an element for one HTML page."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    # Its `*{stroke-linejoin:...}` rule would apply to the whole page, not just the chart.
    svg = re.sub(r"<style[^>]*>.*?</style>\s*", "", svg, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', svg))

    def prefixed(m: re.Match[str]) -> str:
        return f"{m[1]}{key}-{m[2]}" if m[2] in ids else m[0]

    svg = re.sub(r'(\bid="|href="#|url\(#)([^")]+)', prefixed, svg)
    return svg.replace(
        "<svg ", f'<svg class="sf-chart-svg" role="img" aria-label="{esc(title)}" ', 1
    ).strip()


def _svg(fig: Figure, key: str, title: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return _inline(buf.getvalue(), key, title)


# -- bandwidth heatmap --------------------------------------------------------------------------


@_styled
def heatmap(m: BandwidthMatrix) -> Chart:
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import Normalize, TwoSlopeNorm
    from matplotlib.patches import Rectangle

    n = len(m.nodes)
    where = {name: i for i, name in enumerate(m.nodes)}
    data = np.full((n, n), np.nan)
    for c in m.cells:
        if c.src in where and c.dst in where:
            data[where[c.src], where[c.dst]] = c.gbps
    measured = data[~np.isnan(data)]
    thr = m.threshold_gbps
    top = max(float(measured.max()) if measured.size else 0.0, (thr or 0.0) * 1.3, 1.0)
    norm: Normalize = (
        TwoSlopeNorm(vcenter=thr, vmin=0.0, vmax=top)
        if thr and 0 < thr < top
        else Normalize(0, top)
    )
    cmap = colormaps["RdYlGn"].with_extremes(bad="#eeeeee")
    side = min(9.0, max(3.4, 1.6 + 0.11 * n))
    fig = _figure(side + 1.3, side)
    ax = fig.add_subplot()
    image = ax.imshow(data, cmap=cmap, norm=norm, interpolation="none", aspect="equal")
    ax.grid(False)
    font = max(4.0, min(8.0, 260 / max(n, 1)))
    ax.set_xticks(range(n), [_plain(x) for x in m.nodes], rotation=90, fontsize=font)
    ax.set_yticks(range(n), [_plain(x) for x in m.nodes], fontsize=font)
    ax.set_xlabel("receiver")
    ax.set_ylabel("sender")
    low = 0
    for i in range(n):
        for j in range(n):
            v = data[i, j]
            if math.isnan(v):
                continue
            limit = m.loopback_threshold_gbps if i == j else thr
            if limit is not None and v < limit:
                low += 1
                ax.add_patch(
                    Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#000", lw=1.6)
                )
            if n <= ANNOTATE_MAX:
                ax.text(j, i, number(v), ha="center", va="center", fontsize=7, color="#111")
    for src, dst, status in m.lost:
        if src in where and dst in where:
            i, j = where[src], where[dst]
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color=STROKE[status], lw=0))
            if n <= ANNOTATE_MAX:
                word = "failed" if status == "fail" else "n/m"
                ax.text(j, i, word, ha="center", va="center", fontsize=7, color="#fff")
    bar = fig.colorbar(image, ax=ax, shrink=0.8, label="Gb/s")
    if bar.solids is not None:
        # matplotlib rasterizes a long colour scale (through Agg); as vectors it stays exact.
        bar.solids.set_rasterized(False)
    if thr is not None:
        bar.ax.axhline(thr, color="#000", lw=2)
    title = f"RDMA bandwidth, rail {m.rail}"
    ax.set_title(f"{title}: row sends, column receives")
    caption = (
        f"{len(measured)} figures; diagonal: loopback. "
        + (f"Threshold {number(thr)} Gb/s (black line on the scale); " if thr else "")
        + f"{low} below it, outlined. "
        + (
            f"Red: {sum(s == 'fail' for *_, s in m.lost)} failed without a figure; amber: "
            f"{sum(s != 'fail' for *_, s in m.lost)} not measured. "
            if m.lost
            else ""
        )
        + "Grey: not in this schedule."
    )
    return Chart(f"bw-rail{m.rail}", title, caption, _svg(fig, f"bw-rail{m.rail}", title))


# -- NCCL bus bandwidth -------------------------------------------------------------------------


@_styled
def busbw(chart: NcclChart) -> Chart:
    """Bus bandwidth in Gb/s, the unit of every other bandwidth in the report (nccl-tests print
    GB/s: x 8), with the floor drawn inside the axes."""
    from matplotlib.ticker import FuncFormatter

    fig = _figure(7.0, 3.4)
    ax = fig.add_subplot()
    floor = chart.floor_gbytes_s * 8 if chart.floor_gbytes_s is not None else None
    below, top = [], floor or 0.0
    for s in chart.series:
        xs = [p.size_bytes for p in s.points]
        ys = [p.busbw_gbytes_s * 8 for p in s.points]
        top = max(top, *ys) if ys else top
        ax.plot(xs, ys, marker="o", ms=3, lw=1.4, label=_plain(s.op))
        # The floor judges the largest messages; small ones are latency-bound by nature.
        if ys and floor is not None and ys[-1] < floor:
            below.append(s.op)
            ax.plot([xs[-1]], [ys[-1]], "X", color=FAIL, ms=10, zorder=5)
    if floor is not None:
        ax.axhline(floor, color=FAIL, ls="--", lw=1.2, label=f"floor {number(floor)} Gb/s")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_bytes(v)))
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (Gb/s)")
    ax.set_ylim(0, max(top, 1.0) * 1.2)
    ax.legend(fontsize=8, loc="upper left")
    title = "NCCL bus bandwidth by message size"
    ax.set_title(title)
    caption = (
        f"Floor {number(floor)} Gb/s ({number(floor / 8)} GB/s as nccl-tests print it), judged "
        "at the largest size. "
        if floor is not None
        else ""
    ) + (f"Below it: {', '.join(below)} (marked X)." if below else "All above it.")
    return Chart("nccl-busbw", title, caption, _svg(fig, "nccl-busbw", title))


# -- the soak -----------------------------------------------------------------------------------


def _minutes(points: Sequence[Any]) -> list[float]:
    return [p.t_s / 60 for p in points]


def _draw_quiet(ax: Axes, series: Sequence[LaneSeries | TempSeries], floor: float | None) -> None:
    from matplotlib.collections import LineCollection

    lines = [
        [(p.t_s / 60, max(p.value, floor) if floor is not None else p.value) for p in s.points]
        for s in series
        if s.points
    ]
    if lines:
        ax.add_collection(LineCollection(lines, colors=QUIET, linewidths=0.8, alpha=0.7))
        ax.autoscale_view()


@_styled
def lane_errors(soak: Soak) -> Chart | None:
    if not soak.lanes:
        return None
    fig = _figure(8.0, 3.8)
    ax = fig.add_subplot()
    quiet = [s for s in soak.lanes if not s.outlier]
    loud = [s for s in soak.lanes if s.outlier]
    _draw_quiet(ax, quiet, ZERO_PER_S)
    for s in loud[:LABELLED_MAX]:
        ys = [max(p.value, ZERO_PER_S) for p in s.points]
        ax.plot(_minutes(s.points), ys, color=FAIL, lw=2, label=_plain(f"{s.rail} lane {s.lane}"))
    for s in loud[LABELLED_MAX:]:
        ys = [max(p.value, ZERO_PER_S) for p in s.points]
        ax.plot(_minutes(s.points), ys, color=FAIL, lw=2)
    if soak.lane_ratio_max is not None and soak.lane_floor_per_s is not None:
        lowest = soak.lane_ratio_max * soak.lane_floor_per_s
        ax.axhline(
            lowest,
            color="#555",
            ls=":",
            lw=1.2,
            label=f"lowest rate an outlier can have ({number(lowest)}/s)",
        )
    ax.set_yscale("log")
    ax.set_ylim(bottom=ZERO_PER_S / 2)
    ax.set_xlabel("minutes into the soak")
    ax.set_ylabel("corrected bits/s per lane")
    title = "Soak: per-lane error rate"
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left")
    rails = len({s.rail for s in soak.lanes})
    caption = (
        f"{len(soak.lanes)} lanes on {rails} rails; grey: lanes in line with their neighbours; "
        f"red: outliers ({len(loud)}). Zero is drawn at {number(ZERO_PER_S)}/s."
    )
    return Chart("soak-lanes", title, caption, _svg(fig, "soak-lanes", title))


def _temps_axis(
    ax: Axes, series: Sequence[TempSeries], label: str, colour: Mapping[str, str]
) -> None:
    hot = [s for s in series if s.outlier]
    rest = [s for s in series if not s.outlier]
    if len(colour) <= LABELLED_MAX:
        for s in rest:
            ax.plot(
                _minutes(s.points),
                [p.value for p in s.points],
                lw=1.1,
                color=colour[s.node],
                label=_plain(s.node),
            )
    else:
        _draw_quiet(ax, rest, None)
    for s in hot:
        ax.plot(
            _minutes(s.points),
            [p.value for p in s.points],
            color=FAIL,
            lw=2.2,
            label=_plain(f"{s.node} (hot)"),
        )
    ax.set_title(label)
    ax.set_xlabel("minutes into the soak")
    ax.set_ylabel("\u00b0C")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower right")


@_styled
def temperatures(soak: Soak) -> Chart | None:
    groups = [(s, [t for t in soak.temps if t.sensor == s]) for s in ("nic", "gpu")]
    groups = [(s, ts) for s, ts in groups if ts]
    if not groups:
        return None
    fig = _figure(4.2 * len(groups), 3.4)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    # One colour per node in both panels (red stays for the hot ones).
    nodes = sorted({t.node for t in soak.temps})
    palette = [c for c in PALETTE if c != FAIL]
    colour = {node: palette[i % len(palette)] for i, node in enumerate(nodes)}
    for ax, (sensor, series) in zip(axes, groups, strict=True):
        title = "NIC temperature" if sensor == "nic" else "GPU temperature"
        _temps_axis(ax, series, title, colour)
    hot = sorted({t.node for t in soak.temps if t.outlier})
    title = "Soak: temperatures"
    caption = f"Hot: {', '.join(hot)} (red)." if hot else "No node runs hot against the others."
    return Chart("soak-temps", title, caption, _svg(fig, "soak-temps", title))


def render(report: Report) -> list[Chart]:
    """Every chart the report has data for, in reading order."""
    out = [heatmap(m) for m in report.bandwidth]
    if report.nccl is not None and report.nccl.series:
        out.append(busbw(report.nccl))
    if report.soak is not None:
        out += [c for c in (lane_errors(report.soak), temperatures(report.soak)) if c]
    return out


def figure_html(chart: Chart) -> str:
    return (
        f'<figure class="sf-chart" data-chart="{esc(chart.key)}">{chart.svg}'
        f"<figcaption><b>{esc(chart.title)}.</b> {esc(chart.caption)}</figcaption></figure>"
    )
