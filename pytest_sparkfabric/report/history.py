"""Every run of each cable, known by its serial, across results documents (pure): a cable
acceptance campaign over days as one table (`sparkfabric cables`).

A run of a cable says where it ran (as found: LLDP may have found it elsewhere than the plan),
its worst lane BER and the lowest RDMA figure over it, and its verdict as the cable table
gives it (a cable found elsewhere than planned fails)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pytest_sparkfabric import objects
from pytest_sparkfabric.report.build import cable_rows
from pytest_sparkfabric.report.inventory import NOT_READ, placed
from pytest_sparkfabric.report.style import LABEL, number
from pytest_sparkfabric.results import Results, Status

UNREAD = "(serial unread)"
HEAD = ("serial", "date", "cluster", "cable as it ran", "worst BER", "RDMA", "verdict", "file")


@dataclass(frozen=True, slots=True)
class Run:
    serial: str
    started: datetime
    cluster: str
    where: str
    planned: str | None
    """The plan's place for the cable, when it ran elsewhere."""
    ber: float | None
    rdma_gbps: float | None
    status: Status
    source: str


def _lowest_rdma(doc: Results, where: str) -> float | None:
    """The lowest RDMA figure of a direction whose every node end is on the cable's ends."""
    ref = objects.parse(where)
    ends = [s for s in ref.spots if s.node is not None] if ref else []
    found = []
    for m in doc.measurements:
        d = objects.parse(m.objects[0]) if m.kind == "rdma_gbps" and m.objects else None
        if ends and d is not None and all(any(e.meets(s) for s in d.spots) for e in ends):
            found.append(m.value)
    return min(found, default=None)


def runs(docs: Sequence[tuple[str, Results]]) -> list[Run]:
    """Every cable of every document, by serial, then date."""
    out = []
    for source, doc in docs:
        for cable, status in cable_rows(doc):
            serial, where = placed(cable)
            out.append(
                Run(
                    serial or UNREAD,
                    doc.started,
                    doc.cluster.name,
                    where,
                    cable.id if where != cable.id else None,
                    cable.worst_ber,
                    _lowest_rdma(doc, where),
                    status,
                    source,
                )
            )
    return sorted(out, key=lambda r: (r.serial == UNREAD, r.serial, r.started, r.where))


def text(rows: Sequence[Run]) -> str:
    """One table, a serial named once above its runs."""
    table = [HEAD]
    last = None
    for r in rows:
        where = r.where + (f" (planned {r.planned})" if r.planned else "")
        table.append(
            (
                r.serial if r.serial != last else "",
                r.started.strftime("%Y-%m-%d %H:%M %z"),
                r.cluster,
                where,
                number(r.ber) if r.ber is not None else NOT_READ,
                f"{number(r.rdma_gbps)} Gb/s" if r.rdma_gbps is not None else NOT_READ,
                LABEL[r.status],
                r.source,
            )
        )
        last = r.serial
    widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in table
    )
