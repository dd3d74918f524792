"""The charts' data read from a results document (pure): one bandwidth matrix per rail, NCCL
bus bandwidth by message size, the soak's lane and temperature series."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping

from pytest_sparkfabric import objects
from pytest_sparkfabric.report.view import (
    BandwidthMatrix,
    BusbwPoint,
    BusbwSeries,
    BwCell,
    LaneSeries,
    NcclChart,
    Sensor,
    SeriesPoint,
    Soak,
    TempSeries,
)
from pytest_sparkfabric.results import STATUS_OF, Measurement, Results, Status, worst

HOT_MARGIN_C = 10.0
"""A node's temperature series is highlighted when its peak is this far above the median peak
of the others (a display aid for the eye, not a verdict)."""


def _threshold(doc: Results, name: str) -> float | None:
    t = doc.thresholds.get(name)
    return t.value if t else None


def _of_kind(doc: Results, kind: str) -> Iterable[Measurement]:
    return (m for m in doc.measurements if m.kind == kind)


def bandwidth(doc: Results) -> tuple[BandwidthMatrix, ...]:
    """One node x node matrix per rail; a figure measured twice keeps its lower value."""
    cells: dict[int, dict[tuple[str, str], float]] = defaultdict(dict)
    for kind in ("rdma_gbps", "loopback_gbps"):
        for m in _of_kind(doc, kind):
            if m.node is None or m.rail is None:
                continue
            src = m.node
            dst = src if kind == "loopback_gbps" else m.peer
            if dst is None:
                continue
            seen = cells[m.rail].get((src, dst))
            cells[m.rail][(src, dst)] = m.value if seen is None else min(seen, m.value)
    lost = _lost(doc)
    names = tuple(n.name for n in doc.cluster.nodes)
    return tuple(
        BandwidthMatrix(
            rail,
            names,
            tuple(BwCell(s, d, v) for (s, d), v in sorted(cells[rail].items())),
            _threshold(doc, "rail_rdma_gbps"),
            _threshold(doc, "loopback_gbps"),
            tuple(
                (s, d, worst(st))
                for (r, s, d), st in sorted(lost.items())
                if r == rail and (s, d) not in cells[rail]
            ),
        )
        for rail in sorted(cells.keys() | {r for r, _, _ in lost})
    )


def _lost(doc: Results) -> dict[tuple[int, str, str], list[Status]]:
    """(rail, sender, receiver) -> the outcomes of the checks of that direction that did not
    pass (a link's check covers both ways)."""
    out: dict[tuple[int, str, str], list[Status]] = defaultdict(list)
    for item in doc.items:
        if item.outcome not in ("failed", "not_measured"):
            continue
        for text in item.objects:
            ref = objects.parse(text)
            if ref is None or ref.kind not in ("link", "direction") or ref.rail is None:
                continue
            a, b = (s.node for s in ref.spots)
            if a is None or b is None:
                continue
            ways = [(a, b), (b, a)] if ref.kind == "link" else [(a, b)]
            for s, d in ways:
                out[(ref.rail, s, d)].append(STATUS_OF[item.outcome])
    return out


def nccl(doc: Results) -> NcclChart | None:
    by_op: dict[str, dict[int, float]] = defaultdict(dict)
    for m in _of_kind(doc, "nccl_busbw_gbytes_s"):
        if m.size_bytes is not None:
            by_op[m.op or "nccl"][m.size_bytes] = m.value
    if not by_op:
        return None
    series = tuple(
        BusbwSeries(op, tuple(BusbwPoint(s, v) for s, v in sorted(points.items())))
        for op, points in sorted(by_op.items())
    )
    return NcclChart(series, _threshold(doc, "nccl_busbw_gbytes_s"))


def _points(rows: Iterable[tuple[float, float]]) -> tuple[SeriesPoint, ...]:
    peak: dict[float, float] = {}
    for t, v in rows:
        peak[t] = max(peak.get(t, v), v)
    return tuple(SeriesPoint(t, v) for t, v in sorted(peak.items()))


def soak(doc: Results) -> Soak | None:
    lanes: dict[tuple[str, int], list[tuple[float, float]]] = defaultdict(list)
    flagged: set[tuple[str, int]] = set()
    for m in _of_kind(doc, "lane_error_rate_per_s"):
        if m.t_s is None or m.lane is None or not m.objects:
            continue
        key = (m.objects[0], m.lane)
        lanes[key].append((m.t_s, m.value))
        if m.flagged:
            flagged.add(key)
    temps: list[TempSeries] = []
    sensors: tuple[tuple[str, Sensor], ...] = (("nic_temp_c", "nic"), ("gpu_temp_c", "gpu"))
    for kind, sensor in sensors:
        rows: dict[str, list[tuple[float, float]]] = defaultdict(list)
        hot: set[str] = set()
        for m in _of_kind(doc, kind):
            if m.t_s is not None and m.node:
                rows[m.node].append((m.t_s, m.value))
                if m.flagged:
                    hot.add(m.node)
        series = {n: _points(r) for n, r in sorted(rows.items())}
        hot |= hot_nodes({n: max(p.value for p in s) for n, s in series.items() if s})
        temps += [TempSeries(n, sensor, s, n in hot) for n, s in series.items()]
    if not lanes and not temps:
        return None
    return Soak(
        tuple(
            LaneSeries(rail, lane, _points(rows_), (rail, lane) in flagged)
            for (rail, lane), rows_ in sorted(lanes.items())
        ),
        tuple(temps),
        _threshold(doc, "lane_ratio_max"),
        _threshold(doc, "lane_floor_per_s"),
    )


def hot_nodes(peaks: Mapping[str, float], margin_c: float = HOT_MARGIN_C) -> set[str]:
    """Nodes whose peak is `margin_c` above the median peak of the others (3 nodes or more)."""
    if len(peaks) < 3:
        return set()
    return {
        n
        for n, v in peaks.items()
        if v > statistics.median(p for m, p in peaks.items() if m != n) + margin_c
    }
