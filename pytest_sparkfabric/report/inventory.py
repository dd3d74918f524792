"""The cable acceptance table: one row per cable, known by its serial across runs.

Both ends' EEPROMs are read: when they agree a value is shown once; when they differ (two
different cables, or a module swapped) both are shown, A / B, and the cell is marked."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_sparkfabric.report.style import FILL, LABEL, STROKE, esc, number
from pytest_sparkfabric.report.view import CableRow, EndRead

COLUMNS = (
    "serial",
    "cable",
    "end A",
    "end B",
    "vendor",
    "part",
    "length",
    "type",
    "speed",
    "FEC",
    "worst lane BER",
    "verdict",
)
NOT_READ = "\u2014"  # an em dash: not read


def _len(v: float | None) -> str | None:
    return None if v is None else f"{number(v)} m"


def _speed(v: int | None) -> str | None:
    return None if v is None else f"{number(v / 1000)}G"


def _pair(row: CableRow, get: Callable[[EndRead], str | None]) -> str:
    a, b = get(row.a), get(row.b)
    if a is None and b is None:
        return f'<td class="sf-none">{NOT_READ}</td>'
    if a is None or b is None or a == b:
        return f"<td>{esc(a if a is not None else b)}</td>"
    return f'<td class="sf-differs" title="the two ends differ">A: {esc(a)}<br>B: {esc(b)}</td>'


def html(rows: Sequence[CableRow]) -> str:
    """The table as a <table> element."""
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    body = []
    for r in rows:
        ber = f"{number(r.worst_ber)}" if r.worst_ber is not None else NOT_READ
        notes = "".join(f"<br><small>{esc(n)}</small>" for n in r.notes)
        serial = r.serial
        body.append(
            f'<tr class="sf-cable-row" data-serial="{esc(serial or "")}" '
            f'data-cable="{esc(r.cable)}" data-status="{r.status}">'
            + _pair(r, lambda e: e.serial)
            + f"<td><code>{esc(r.cable)}</code></td>"
            + f"<td>{esc(r.a.end.label)}</td><td>{esc(r.b.end.label)}</td>"
            + _pair(r, lambda e: e.vendor)
            + _pair(r, lambda e: e.part)
            + _pair(r, lambda e: _len(e.length_m))
            + _pair(r, lambda e: e.type)
            + _pair(r, lambda e: _speed(e.speed_mbps))
            + _pair(r, lambda e: e.fec)
            + f"<td>{esc(ber)}</td>"
            + f'<td style="background:{FILL[r.status]};color:{STROKE[r.status]};'
            f'font-weight:bold">{esc(LABEL[r.status])}{notes}</td></tr>'
        )
    return (
        '<table class="sf-inventory"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


def text(rows: Sequence[CableRow]) -> str:
    """The same record as plain text (one line per cable), for logs and tickets."""
    out = []
    for r in rows:
        vendor = r.a.vendor or r.b.vendor or NOT_READ
        part = r.a.part or r.b.part or NOT_READ
        ber = number(r.worst_ber) if r.worst_ber is not None else NOT_READ
        out.append(
            f"{r.serial or 'serial unread'}  {r.cable}  {vendor} {part}  "
            f"BER {ber}  {LABEL[r.status]}"
        )
    return "\n".join(out) + ("\n" if out else "")
