"""The cables by serial: one run's acceptance table (both ends' EEPROM values, shown once when
they agree, A / B and marked when they differ), and every run of each cable across documents
(`sparkfabric cables`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from pytest_sparkfabric import objects
from pytest_sparkfabric.report.build import cable_rows, label, placed
from pytest_sparkfabric.report.style import FILL, LABEL, STROKE, esc, number
from pytest_sparkfabric.results import Cable, CableEnd, Results, Status

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


def html(rows: Sequence[tuple[Cable, Status]]) -> str:
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
            + f"<td>{esc(label(c.a))}</td><td>{esc(label(c.b))}</td>"
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


@dataclass(frozen=True, slots=True)
class Run:
    serial: str
    started: datetime
    cluster: str
    where: str
    planned: str | None  # the plan's place for the cable, when it ran elsewhere
    ber: float | None
    rdma_gbps: float | None
    status: Status
    source: str


def runs(docs: Sequence[tuple[str, Results]]) -> list[Run]:
    """Every cable of every document by serial, then date, with its lowest RDMA figure."""
    out = []
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
            planned = cable.id if where != cable.id else None
            run = (serial or UNREAD, doc.started, doc.cluster.name, where, planned)
            out.append(Run(*run, cable.worst_ber, min(found, default=None), status, source))
    return sorted(out, key=lambda r: (r.serial == UNREAD, r.serial, r.started, r.where))


def text(rows: Sequence[Run]) -> str:
    """One table, a serial named once above its runs."""
    table = [HEAD]
    for k, r in enumerate(rows):
        table.append(
            (
                r.serial if k == 0 or r.serial != rows[k - 1].serial else "",
                r.started.strftime("%Y-%m-%d %H:%M %z"),
                r.cluster,
                r.where + (f" (planned {r.planned})" if r.planned else ""),
                number(r.ber) if r.ber is not None else NOT_READ,
                f"{number(r.rdma_gbps)} Gb/s" if r.rdma_gbps is not None else NOT_READ,
                LABEL[r.status],
                r.source,
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in table
    )
