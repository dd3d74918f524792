"""What the picture draws (pure): each object the worst outcome of the items whose ids reach it (a
link its cable on its rail, a rail its node's NIC), marked by the causes naming it; and the cables
by serial: one run's table (both ends, A / B where they differ), every run of each (`cables`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_sparkfabric import objects
from pytest_sparkfabric.report.style import FILL, LABEL, STROKE, esc, number, size_bytes
from pytest_sparkfabric.results import STATUS_OF, worst

if TYPE_CHECKING:
    from pytest_sparkfabric.results import Cable, CableEnd, Measurement, Results, Status, Topology


@dataclass(frozen=True, slots=True)
class End:
    """A node's QSFP port (`p0`, `p1`) or a switch leg (node None)."""

    node: str | None
    port: str

    @property
    def label(self) -> str:
        return f"{self.node}:{self.port}" if self.node is not None else f"switch:{self.port}"


@dataclass(frozen=True, slots=True)
class RailState:
    """One rail (PCIe half) carried by a cable: its worst verdict and measured values."""

    rail: int
    status: Status
    notes: tuple[str, ...] = ()
    elsewhere: bool = False  # all that failed here a cause on other objects explains: dashed


@dataclass(frozen=True, slots=True)
class FabricNode:
    name: str
    status: Status
    notes: tuple[str, ...] = ()
    causes: tuple[int, ...] = ()
    """Numbers (1-based, in the banner's order) of the root causes that name it."""
    elsewhere: bool = False


@dataclass(frozen=True, slots=True)
class FabricCable:
    """One cable of the plan (`id`), drawn where it was found to run (`a`, `b`)."""

    id: str
    a: End
    b: End
    status: Status
    notes: tuple[str, ...] = ()
    rails: tuple[RailState, ...] = ()
    causes: tuple[int, ...] = ()
    elsewhere: bool = False
    planned: tuple[End, End] | None = None
    """The plan's ends, where the cable was found elsewhere (LLDP): a wrong cable."""
    serial: str | None = None


@dataclass(frozen=True, slots=True)
class Picture:
    """The fabric as drawn: nodes in cluster.yaml order, cables as cabled."""

    topology: Topology
    nodes: tuple[FabricNode, ...]
    cables: tuple[FabricCable, ...]
    switch: str | None = None


NOTES_MAX = 12
KIND_LABELS = {
    "rdma_gbps": "RDMA",
    "rdma_pair_gbps": "RDMA both rails",
    "tcp_gbps": "TCP",
    "loopback_gbps": "loopback",
    "ber_max": "worst pre-FEC BER",
    "nccl_busbw_gbytes_s": "NCCL busbw",
}
PEAKS = {
    "lane_error_rate_per_s": ("worst lane rate", "corrected bits/s"),
    "nic_temp_c": ("peak NIC temperature", "C"),
    "gpu_temp_c": ("peak GPU temperature", "C"),
}
"""Series shown in a tooltip by their peak: one line per object, not one per sample."""
# Figures read at a receiving rail that judge the cable it is on, not the node.
LINK_QUALITY_KINDS = frozenset({"lane_error_rate_per_s", "ber_max"})


def _end(d: CableEnd | objects.Spot) -> End:
    port = d.leg if isinstance(d, objects.Spot) and d.node is None else d.port
    return End(d.node, f"p{port}" if d.node is not None and isinstance(port, int) else str(port))


def _found(d: Cable) -> tuple[End, End] | None:
    """Where the cable runs, when LLDP found it elsewhere than the plan (`Cable.found`)."""
    ref = objects.parse(d.found) if d.found and d.found != d.id else None
    return (_end(ref.spots[0]), _end(ref.spots[1])) if ref and ref.kind == "cable" else None


def placed(c: Cable) -> tuple[str | None, str]:
    """(serial, where it runs) of the cable in a place of the plan: as found where LLDP found
    it elsewhere, with the serial read at the end it was found from."""
    if not c.found or c.found == c.id:
        return c.serial, c.id
    first = c.found.partition("<->")[0]
    serial = next((e.serial for e in (c.a, c.b) if _end(e).label == first and e.serial), c.serial)
    return serial, c.found


Target = tuple[str, str, int | None]  # ("node", name, None), ("cable", id, rail or None: all)


class _Index:
    """Which drawn object each id reaches."""

    def __init__(self, cables: Sequence[FabricCable]) -> None:
        self.cables = cables
        self.at = {(e.node, e.port): c.id for c in cables for e in (c.a, c.b)}
        self.of_node: dict[str, list[str]] = defaultdict(list)
        for c in cables:
            for e in (c.a, c.b):
                if e.node is not None:
                    self.of_node[e.node].append(c.id)

    def cables_at(self, p: objects.Spot) -> list[str]:
        if p.leg is None and p.port is None:
            return list(self.of_node.get(p.node, ())) if p.node else []
        key = (None, p.leg) if p.leg is not None else (p.node, f"p{p.port}")
        found = self.at.get(key) if p.leg is not None or p.node is not None else None
        return [found] if found else []

    def targets(self, text: str, link_quality: bool = False) -> list[Target]:
        """The drawn objects an id reaches; a rail id reaches its node (the NIC), or with
        `link_quality` the cable on that rail."""
        ref = objects.parse(text)
        if ref is None or ref.kind == "cluster":  # the cluster or the switch: no one object
            return []
        pts = ref.spots
        if ref.kind == "rail" and link_quality:
            return [("cable", c, pts[0].rail) for c in self.cables_at(pts[0])]
        if ref.kind in ("node", "rail"):
            return [("node", pts[0].node, None)] if pts[0].node else []
        if ref.kind == "cable" and any(c.id == text for c in self.cables):
            return [("cable", text, None)]
        if ref.kind in ("port", "leg"):
            return [("cable", c, None) for c in self.cables_at(pts[0])]
        # A path crosses the cable joining its ends, else (through a switch) each end's own.
        ca, cb = self.cables_at(pts[0]), self.cables_at(pts[1])
        return [("cable", c, ref.rail) for c in [c for c in ca if c in cb] or ca + cb]


def picture(doc: Results) -> Picture:
    bare = []
    statuses: dict[Target, list[Status]] = defaultdict(list)
    blamed: set[Target] = set()
    for d in doc.cables:
        plan, found = (_end(d.a), _end(d.b)), _found(d)
        a, b = found or plan
        bare.append(FabricCable(d.id, a, b, "unknown", planned=found and plan, serial=placed(d)[0]))
        # The cable's own verdict (link, FEC, EEPROM, soak lanes): its own failure.
        statuses[("cable", d.id, None)].append("fail" if found else d.status)
        if found or d.status in ("fail", "not_measured"):
            blamed.add(("cable", d.id, None))
    index = _Index(bare)
    named: dict[int, set[tuple[str, str]]] = {}
    explaining: dict[str, list[int]] = defaultdict(list)
    marks: dict[tuple[str, str], list[int]] = defaultdict(list)
    for n, cause in enumerate(doc.causes, 1):
        named[n] = {(k, name) for o in cause.objects for k, name, _ in index.targets(o)}
        for iid in cause.items:
            explaining[iid].append(n)
        for kind, name in named[n]:
            marks[(kind, name)].append(n)
            # What a likely root cause blames failed, whatever check saw it (a marginal cable
            # that only a rail's soak check measured).
            if cause.certain:
                statuses[(kind, name, None)].append("fail")
                blamed.add((kind, name, None))
    for item in doc.items:
        status = STATUS_OF[item.outcome]
        targets = [t for o in item.objects for t in index.targets(o)]
        if not targets and item.node:
            targets = [("node", item.node, None)]
        by = explaining.get(item.id, [])
        for t in targets:
            statuses[t].append(status)
            if status != "pass" and (not by or any(t[:2] in named[n] for n in by)):
                blamed.add(t)
    notes = _notes(doc, index)

    def elsewhere(status: Status, keys: Iterable[Target]) -> bool:
        return status in ("fail", "not_measured") and not any(k in blamed for k in keys)

    nodes = []
    for name in (n.name for n in doc.cluster.nodes):
        here: Target = ("node", name, None)
        status, mine = worst(statuses[here]), marks[("node", name)]
        away = elsewhere(status, [here]) and not mine
        nodes.append(FabricNode(name, status, _cap(notes[here]), tuple(sorted(mine)), away))
    cables = []
    for c in bare:
        seen = {r for k, cid, r in (*statuses, *notes) if k == "cable" and cid == c.id}
        rails = []
        for r in sorted(r for r in seen if r is not None):
            on: Target = ("cable", c.id, r)
            status = worst(statuses[on])
            rails.append(RailState(r, status, _cap(notes[on]), elsewhere(status, [on])))
        whole = worst([*statuses[("cable", c.id, None)], *(r.status for r in rails)])
        if whole == "fail" and all(r.status == "pass" for r in rails):
            # Failed as a whole (its own check, a cause that names it): both strokes red.
            rails = [replace(r, status="fail") for r in rails]
        keys: list[Target] = [("cable", c.id, None), *(("cable", c.id, r.rail) for r in rails)]
        numbers, said = tuple(sorted(marks[("cable", c.id)])), _cap(notes[("cable", c.id, None)])
        away = elsewhere(whole, keys) and not numbers
        cables.append(
            replace(c, status=whole, notes=said, rails=tuple(rails), causes=numbers, elsewhere=away)
        )
    return Picture(doc.cluster.topology, tuple(nodes), tuple(cables), doc.cluster.switch)


def _cap(lines: Sequence[str]) -> tuple[str, ...]:
    if len(lines) <= NOTES_MAX:
        return tuple(lines)
    return (*lines[: NOTES_MAX - 1], f"... and {len(lines) - NOTES_MAX + 1} more")


def _value(m: Measurement) -> str:
    """A figure with its unit; a bandwidth in Gb/s, the report's one unit (nccl-tests: GB/s)."""
    if m.unit == "GB/s":
        return f"{number(m.value * 8)} Gb/s"
    return f"{number(m.value)} {m.unit}".rstrip()


def _kind(m: Measurement) -> str:
    return KIND_LABELS.get(m.kind, m.kind.replace("_", " "))


def _notes(doc: Results, index: _Index) -> dict[Target, list[str]]:
    """Tooltip lines per object: series' peaks, sized figures at their largest, the others."""
    peaks: dict[tuple[Target, str], Measurement] = {}
    largest: dict[tuple[Target, str, str], Measurement] = {}
    figures: dict[Target, list[str]] = defaultdict(list)
    for m in doc.measurements:
        quality = m.kind in LINK_QUALITY_KINDS
        for t in dict.fromkeys(t for o in m.objects for t in index.targets(o, quality)):
            if m.kind in PEAKS:
                if (was := peaks.get((t, m.kind))) is None or was.value < m.value:
                    peaks[(t, m.kind)] = m
            elif m.size_bytes is not None:
                was = largest.get((t, m.kind, m.op or ""))
                if was is None or (was.size_bytes or 0) < m.size_bytes:
                    largest[(t, m.kind, m.op or "")] = m
            else:
                where = f" {m.node}->{m.peer}" if m.node and m.peer else ""
                figures[t].append(f"{_kind(m)}{where}: {_value(m)}")
    notes: dict[Target, list[str]] = defaultdict(list)
    for (t, kind), m in peaks.items():
        notes[t].append(f"{PEAKS[kind][0]}: {number(m.value)} {PEAKS[kind][1]}")
    for (t, _, op), m in largest.items():
        size = size_bytes(m.size_bytes or 0)
        notes[t].append(f"{_kind(m)} {op}".strip() + f" at {size}B: {_value(m)}")
    for t, lines in figures.items():
        notes[t] += lines
    return notes


def cable_rows(doc: Results, drawn: Picture | None = None) -> list[tuple[Cable, Status]]:
    """Each cable with its verdict in the cable table. A cable whose failures all have a root
    cause elsewhere keeps its own verdict: the table is the record a cable vendor sees. A cable
    found elsewhere than planned fails."""
    kept = {c.id: c.status for c in (drawn or picture(doc)).cables if not c.elsewhere}
    return [(d, "fail" if _found(d) else kept.get(d.id, d.status)) for d in doc.cables]


NOT_READ = "\u2014"  # an em dash: not read
ENDS: tuple[tuple[str, Callable[[CableEnd], str | None]], ...] = (
    ("vendor", lambda e: e.vendor),
    ("part", lambda e: e.part),
    ("length", lambda e: None if e.length_m is None else f"{number(e.length_m)} m"),
    ("type", lambda e: e.type),
    ("speed", lambda e: None if e.speed_mbps is None else f"{number(e.speed_mbps / 1000)}G"),
    ("FEC", lambda e: e.fec),
)
"""The EEPROM and link columns, read at both ends."""
COLUMNS = ("serial", "cable", "end A", "end B", *(t for t, _ in ENDS), "worst lane BER", "verdict")


def _pair(c: Cable, get: Callable[[CableEnd], str | None]) -> str:
    a, b = get(c.a), get(c.b)
    if a is None and b is None:
        return f'<td class="sf-none">{NOT_READ}</td>'
    if a is None or b is None or a == b:
        return f"<td>{esc(a if a is not None else b)}</td>"
    return f'<td class="sf-differs" title="the two ends differ">A: {esc(a)}<br>B: {esc(b)}</td>'


def cable_table(rows: Sequence[tuple[Cable, Status]]) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    body = []
    for c, status in rows:
        ber = f"{number(c.worst_ber)}" if c.worst_ber is not None else NOT_READ
        notes = "".join(f"<br><small>{esc(n)}</small>" for n in c.notes)
        found = ""
        if c.found and c.found != c.id:
            found = f'<br><small class="sf-found">found: <code>{esc(c.found)}</code></small>'
        body.append(
            f'<tr class="sf-cable-row" data-serial="{esc(c.serial or "")}" '
            f'data-cable="{esc(c.id)}" data-status="{status}">'
            + _pair(c, lambda e: e.serial)
            + f"<td><code>{esc(c.id)}</code>{found}</td>"
            + f"<td>{esc(_end(c.a).label)}</td><td>{esc(_end(c.b).label)}</td>"
            + "".join(_pair(c, get) for _, get in ENDS)
            + f"<td>{esc(ber)}</td>"
            + f'<td style="background:{FILL[status]};color:{STROKE[status]};'
            f'font-weight:bold">{esc(LABEL[status])}{notes}</td></tr>'
        )
    return (
        f'<table class="sf-inventory"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


# -- every run of each cable --------------------------------------------------------------------

UNREAD = "(serial unread)"
HEAD = ("serial", "date", "cluster", "cable as it ran", "worst BER", "RDMA", "verdict", "file")


def history(docs: Sequence[tuple[str, Results]]) -> str:
    """Every cable of every document in one table by serial, then date, with its lowest RDMA
    figure; a serial named once above its runs."""
    runs = []
    for source, doc in docs:
        for cable, status in cable_rows(doc):
            serial, where = placed(cable)
            ref = objects.parse(where)
            ends = [s for s in ref.spots if s.node is not None] if ref else []
            found = []
            for m in doc.measurements:
                d = objects.parse(m.objects[0]) if m.kind == "rdma_gbps" and m.objects else None
                if ends and d is not None and all(any(e.meets(s) for s in d.spots) for e in ends):
                    found.append(m.value)
            rdma, named = min(found, default=None), serial or UNREAD
            cells = (
                doc.started.strftime("%Y-%m-%d %H:%M %z"),
                doc.cluster.name,
                where + (f" (planned {cable.id})" if where != cable.id else ""),
                number(cable.worst_ber) if cable.worst_ber is not None else NOT_READ,
                f"{number(rdma)} Gb/s" if rdma is not None else NOT_READ,
                LABEL[status],
                source,
            )
            runs.append(((named == UNREAD, named, doc.started, where), cells))
    table: list[Sequence[str]] = [HEAD]
    shown = None
    for (_, named, _, _), cells in sorted(runs, key=lambda run: run[0]):
        table.append((named if named != shown else "", *cells))
        shown = named
    widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in table
    )
