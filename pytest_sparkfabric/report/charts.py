"""Static charts as inline SVG (matplotlib's SVG backend, imported only to draw): bandwidth heatmaps
per rail, NCCL busbw by size, the soak's lane error rates and temperatures, all in Gb/s. Stable
output: glyphs as paths, fixed hash salt, ids prefixed per chart, no date or creator metadata."""

from __future__ import annotations

import contextlib
import io
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_sparkfabric import objects
from pytest_sparkfabric.report.style import STROKE, esc, number, size_bytes
from pytest_sparkfabric.results import STATUS_OF, Results, Status, worst

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
ZERO_PER_S = 0.1  # where a lane rate of zero is drawn on the log axis
ANNOTATE_MAX = 10  # heatmaps of at most this many nodes print each cell's value
LABELLED_MAX = 8  # at most this many series get their own colour and legend entry, the rest grey
FAIL = STROKE["fail"]
QUIET = "#90a4ae"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
"""matplotlib's tab10 without its red (red marks what is out of line) and grey (the quiet)."""
HOT_MARGIN_C = 10.0  # a node this far above the others' median peak is highlighted (no verdict)


@dataclass(frozen=True, slots=True)
class Chart:
    key: str
    title: str
    caption: str
    svg: str


@dataclass(frozen=True, slots=True)
class Matrix:
    """One rail's node x node bandwidth (Gb/s): row sends, column receives; the diagonal is
    loopback. `lost`: (sender, receiver, status) of directions with no figure whose check failed
    or could not measure, drawn red or amber, never as "not in this schedule"."""

    rail: int
    nodes: tuple[str, ...]
    cells: Mapping[tuple[str, str], float]
    threshold: float | None = None
    loopback_threshold: float | None = None
    lost: tuple[tuple[str, str, Status], ...] = ()


@dataclass(frozen=True, slots=True)
class Series:
    """A soak line (a lane, a node's sensor): (seconds in, value), a time read twice its peak."""

    name: str
    points: tuple[tuple[float, float], ...]
    outlier: bool = False


def _threshold(doc: Results, name: str) -> float | None:
    t = doc.thresholds.get(name)
    return t.value if t else None


def matrices(doc: Results) -> list[Matrix]:
    """One matrix per rail; a figure measured twice keeps its lower value."""
    cells: dict[int, dict[tuple[str, str], float]] = defaultdict(dict)
    for m in doc.measurements:
        dst = m.node if m.kind == "loopback_gbps" else m.peer if m.kind == "rdma_gbps" else None
        if m.node is None or m.rail is None or dst is None:
            continue
        seen = cells[m.rail].get((m.node, dst))
        cells[m.rail][(m.node, dst)] = m.value if seen is None else min(seen, m.value)
    lost: dict[tuple[int, str, str], list[Status]] = defaultdict(list)
    for item in doc.items:
        failed = item.outcome in ("failed", "not_measured")
        for ref in (objects.parse(o) for o in item.objects) if failed else ():
            if ref is None or ref.kind not in ("link", "direction") or ref.rail is None:
                continue
            a, b = (s.node for s in ref.spots)
            for s, d in ((a, b), (b, a)) if ref.kind == "link" else ((a, b),):
                if s and d:  # a link's check covers both ways
                    lost[(ref.rail, s, d)].append(STATUS_OF[item.outcome])
    names = tuple(n.name for n in doc.cluster.nodes)
    limits = (_threshold(doc, "rail_rdma_gbps"), _threshold(doc, "loopback_gbps"))
    out = []
    for rail in sorted(cells.keys() | {r for r, _, _ in lost}):
        on = sorted((s, d, worst(st)) for (r, s, d), st in lost.items() if r == rail)
        gone = tuple((s, d, st) for s, d, st in on if (s, d) not in cells[rail])
        out.append(Matrix(rail, names, cells[rail], *limits, gone))
    return out


def _series(doc: Results, kind: str, key: Callable[[Any], str | None]) -> list[Series]:
    peaks: dict[str, dict[float, float]] = defaultdict(dict)
    flagged: set[str] = set()
    for m in doc.measurements:
        if (name := key(m) if m.kind == kind and m.t_s is not None else None) is not None:
            peaks[name][m.t_s or 0.0] = max(peaks[name].get(m.t_s or 0.0, m.value), m.value)
            flagged |= {name} if m.flagged else set()
    return [Series(n, tuple(sorted(p.items())), n in flagged) for n, p in sorted(peaks.items())]


def lanes(doc: Results) -> list[Series]:
    """Corrected bits per second on each lane over the soak; an outlier is flagged."""
    return _series(
        doc,
        "lane_error_rate_per_s",
        lambda m: f"{m.objects[0]} lane {m.lane}" if m.objects and m.lane is not None else None,
    )


def temps(doc: Results, kind: str) -> list[Series]:
    """Each node's `nic_temp_c` or `gpu_temp_c` over the soak; a flagged or hot node is out."""
    series = _series(doc, kind, lambda m: m.node)
    hot = hot_nodes({s.name: max(v for _, v in s.points) for s in series if s.points})
    return [Series(s.name, s.points, s.outlier or s.name in hot) for s in series]


def hot_nodes(peaks: Mapping[str, float], margin_c: float = HOT_MARGIN_C) -> set[str]:
    """Nodes whose peak is `margin_c` above the median peak of the others (3 nodes or more)."""
    if len(peaks) < 3:
        return set()
    others = {n: [p for m, p in peaks.items() if m != n] for n in peaks}
    return {n for n, v in peaks.items() if v > statistics.median(others[n]) + margin_c}


def _plain(text: object) -> str:
    """A name (from cluster.yaml, tool output) as a label: matplotlib reads `$...$` as math."""
    return str(text).replace("$", r"\$")


@contextlib.contextmanager
def _styled() -> Iterator[None]:
    """Draw under RC (figures read the settings as they are made, not only when saved)."""
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def _figure(width_in: float, height_in: float, panels: int = 1) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    return fig, list(fig.subplots(1, panels, squeeze=False)[0])


def _chart(fig: Figure, key: str, title: str, caption: str) -> Chart:
    """The figure as an SVG element for one HTML page (its ids prefixed with the key)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()[buf.getvalue().index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    # Its `*{stroke-linejoin:...}` rule would apply to the whole page, not just the chart.
    svg = re.sub(r"<style[^>]*>.*?</style>\s*", "", svg, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', svg))

    def prefixed(m: re.Match[str]) -> str:
        return f"{m[1]}{key}-{m[2]}" if m[2] in ids else m[0]

    svg = re.sub(r'(\bid="|href="#|url\(#)([^")]+)', prefixed, svg)
    head = f'<svg class="sf-chart-svg" role="img" aria-label="{esc(title)}" '
    return Chart(key, title, caption, svg.replace("<svg ", head, 1).strip())


@_styled()
def heatmap(m: Matrix) -> Chart:
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import Normalize, TwoSlopeNorm
    from matplotlib.patches import Rectangle

    n, where = len(m.nodes), {name: i for i, name in enumerate(m.nodes)}
    data = np.full((n, n), np.nan)
    for (src, dst), gbps in m.cells.items():
        if src in where and dst in where:
            data[where[src], where[dst]] = gbps
    measured = data[~np.isnan(data)]
    thr = m.threshold
    top = max(float(measured.max()) if measured.size else 0.0, (thr or 0.0) * 1.3, 1.0)
    norm = TwoSlopeNorm(thr, 0.0, top) if thr and 0 < thr < top else Normalize(0, top)
    cmap = colormaps["RdYlGn"].with_extremes(bad="#eeeeee")
    side = min(9.0, max(3.4, 1.6 + 0.11 * n))
    fig, (ax,) = _figure(side + 1.3, side)
    image = ax.imshow(data, cmap=cmap, norm=norm, interpolation="none", aspect="equal")
    ax.grid(False)
    font = max(4.0, min(8.0, 260 / max(n, 1)))
    cell = min(10.0, max(7.0, 60 / max(n, 1)))  # a cell's figure, as large as the cell allows
    ax.set_xticks(range(n), [_plain(x) for x in m.nodes], rotation=90, fontsize=font)
    ax.set_yticks(range(n), [_plain(x) for x in m.nodes], fontsize=font)
    title = f"RDMA bandwidth, rail {m.rail}"
    ax.set(xlabel="receiver", ylabel="sender", title=f"{title}: row sends, column receives")
    low = 0
    for (i, j), v in np.ndenumerate(data):
        limit = m.loopback_threshold if i == j else thr
        if limit is not None and v < limit:  # never true of NaN (no figure)
            low += 1
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#000", lw=1.6))
        if n <= ANNOTATE_MAX and not math.isnan(v):
            ax.text(j, i, number(v), ha="center", va="center", fontsize=cell, color="#111")
    for src, dst, status in m.lost:
        if src in where and dst in where:
            i, j = where[src], where[dst]
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color=STROKE[status], lw=0))
            if n <= ANNOTATE_MAX:
                word = "failed" if status == "fail" else "n/m"
                ax.text(j, i, word, ha="center", va="center", fontsize=cell, color="#fff")
    bar = fig.colorbar(image, ax=ax, shrink=0.8, label="Gb/s")
    if bar.solids is not None:
        # matplotlib rasterizes a long colour scale (through Agg); as vectors it stays exact.
        bar.solids.set_rasterized(False)
    if thr is not None:
        bar.ax.axhline(thr, color="#000", lw=2)
    red = sum(s == "fail" for *_, s in m.lost)
    caption = f"{len(measured)} figures; diagonal: loopback. "
    caption += f"Threshold {number(thr)} Gb/s (black line on the scale); " if thr else ""
    caption += f"{low} below it, outlined. "
    if m.lost:
        caption += f"Red: {red} failed without a figure; amber: {len(m.lost) - red} not measured. "
    caption += "Grey: not in this schedule."
    return _chart(fig, f"bw-rail{m.rail}", title, caption)


@_styled()
def busbw(doc: Results) -> Chart | None:
    """Bus bandwidth in Gb/s, the report's one unit (nccl-tests print GB/s), and the floor."""
    from matplotlib.ticker import FuncFormatter

    by_op: dict[str, dict[int, float]] = defaultdict(dict)
    for m in doc.measurements:
        if m.kind == "nccl_busbw_gbytes_s" and m.size_bytes is not None:
            by_op[m.op or "nccl"][m.size_bytes] = m.value * 8
    if not by_op:
        return None
    fig, (ax,) = _figure(7.0, 3.4)
    floor = None if (gbytes := _threshold(doc, "nccl_busbw_gbytes_s")) is None else gbytes * 8
    below, top = [], floor or 0.0
    for op, points in sorted(by_op.items()):
        xs, ys = sorted(points), [points[x] for x in sorted(points)]
        top = max(top, *ys)
        ax.plot(xs, ys, marker="o", ms=3, lw=1.4, label=_plain(op))
        # The floor judges the largest messages; small ones are latency-bound by nature.
        if floor is not None and ys[-1] < floor:
            below.append(op)
            ax.plot([xs[-1]], [ys[-1]], "X", color=FAIL, ms=10, zorder=5)
    if floor is not None:
        ax.axhline(floor, color=FAIL, ls="--", lw=1.2, label=f"floor {number(floor)} Gb/s")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_bytes(v)))
    title = "NCCL bus bandwidth by message size"
    ax.set(xlabel="message size (bytes)", ylabel="bus bandwidth (Gb/s)", title=title)
    ax.set_ylim(0, max(top, 1.0) * 1.2)
    ax.legend(fontsize=8, loc="upper left")
    caption = f"Below it: {', '.join(below)} (marked X)." if below else "All above it."
    if floor is not None:
        said = f"{number(floor / 8)} GB/s as nccl-tests print it"
        caption = f"Floor {number(floor)} Gb/s ({said}), judged at the largest size. {caption}"
    return _chart(fig, "nccl-busbw", title, caption)


def _minutes(s: Series, floor: float | None = None) -> tuple[list[float], list[float]]:
    return [t / 60 for t, _ in s.points], [max(v, floor) if floor else v for _, v in s.points]


def _draw_quiet(ax: Axes, series: Sequence[Series], floor: float | None) -> None:
    from matplotlib.collections import LineCollection

    lines = [list(zip(*_minutes(s, floor), strict=True)) for s in series if s.points]
    if lines:
        ax.add_collection(LineCollection(lines, colors=QUIET, linewidths=0.8, alpha=0.7))
        ax.autoscale_view()


@_styled()
def lane_errors(doc: Results) -> Chart | None:
    series = lanes(doc)
    if not series:
        return None
    fig, (ax,) = _figure(8.0, 3.8)
    loud = [s for s in series if s.outlier]
    _draw_quiet(ax, [s for s in series if not s.outlier], ZERO_PER_S)
    for k, s in enumerate(loud):
        label = _plain(s.name) if k < LABELLED_MAX else None
        ax.plot(*_minutes(s, ZERO_PER_S), color=FAIL, lw=2, label=label)
    ratio, floor = _threshold(doc, "lane_ratio_max"), _threshold(doc, "lane_floor_per_s")
    if ratio is not None and floor is not None:
        label = f"lowest rate an outlier can have ({number(ratio * floor)}/s)"
        ax.axhline(ratio * floor, color="#555", ls=":", lw=1.2, label=label)
    ax.set_yscale("log")
    ax.set_ylim(bottom=ZERO_PER_S / 2)
    title = "Soak: per-lane error rate"
    ax.set(xlabel="minutes into the soak", ylabel="corrected bits/s per lane", title=title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left")
    rails = len({s.name.rpartition(" lane ")[0] for s in series})
    caption = (
        f"{len(series)} lanes on {rails} rails; grey: lanes in line with their neighbours; "
        f"red: outliers ({len(loud)}). Zero is drawn at {number(ZERO_PER_S)}/s."
    )
    return _chart(fig, "soak-lanes", title, caption)


@_styled()
def temperatures(doc: Results) -> Chart | None:
    panels = [(f"{k} temperature", temps(doc, f"{k.lower()}_temp_c")) for k in ("NIC", "GPU")]
    groups = [(title, series) for title, series in panels if series]
    if not groups:
        return None
    fig, axes = _figure(4.2 * len(groups), 3.4, len(groups))
    # One colour per node in both panels (red stays for the hot ones).
    nodes = sorted({s.name for _, series in groups for s in series})
    colour = {node: PALETTE[i % len(PALETTE)] for i, node in enumerate(nodes)}
    for ax, (label, series) in zip(axes, groups, strict=True):
        rest = [s for s in series if not s.outlier]
        if len(colour) <= LABELLED_MAX:
            for s in rest:
                ax.plot(*_minutes(s), lw=1.1, color=colour[s.name], label=_plain(s.name))
        else:
            _draw_quiet(ax, rest, None)
        for s in (s for s in series if s.outlier):
            ax.plot(*_minutes(s), color=FAIL, lw=2.2, label=_plain(f"{s.name} (hot)"))
        ax.set(title=label, xlabel="minutes into the soak", ylabel="\u00b0C")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
    hot = sorted({s.name for _, series in groups for s in series if s.outlier})
    title = "Soak: temperatures"
    caption = f"Hot: {', '.join(hot)} (red)." if hot else "No node runs hot against the others."
    return _chart(fig, "soak-temps", title, caption)


def render(doc: Results) -> list[Chart]:
    out = [heatmap(m) for m in matrices(doc)]
    return out + [c for c in (busbw(doc), lane_errors(doc), temperatures(doc)) if c]
