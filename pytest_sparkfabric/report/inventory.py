"""The cable acceptance table: one row per cable, known by its serial across runs.

Both ends' EEPROMs are read: when they agree a value is shown once; when they differ (two
different cables, or a module swapped) both are shown, A / B, and the cell is marked. A cable
LLDP found elsewhere than the plan says shows where it runs, and fails."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_sparkfabric.report.style import FILL, LABEL, STROKE, esc, number
from pytest_sparkfabric.results import Cable, CableEnd, Status

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


def label(e: CableEnd) -> str:
    if e.node is None:
        return f"switch:{e.port}"
    return f"{e.node}:p{e.port}" if isinstance(e.port, int) else f"{e.node}:{e.port}"


def placed(c: Cable) -> tuple[str | None, str]:
    """(serial, where it runs) of the cable in a place of the plan: as found where LLDP found
    it elsewhere, with the serial read at the end it was found from."""
    if not c.found or c.found == c.id:
        return c.serial, c.id
    first = c.found.partition("<->")[0]
    serial = next((e.serial for e in (c.a, c.b) if label(e) == first and e.serial), c.serial)
    return serial, c.found


def _len(v: float | None) -> str | None:
    return None if v is None else f"{number(v)} m"


def _speed(v: int | None) -> str | None:
    return None if v is None else f"{number(v / 1000)}G"


def _pair(c: Cable, get: Callable[[CableEnd], str | None]) -> str:
    a, b = get(c.a), get(c.b)
    if a is None and b is None:
        return f'<td class="sf-none">{NOT_READ}</td>'
    if a is None or b is None or a == b:
        return f"<td>{esc(a if a is not None else b)}</td>"
    return f'<td class="sf-differs" title="the two ends differ">A: {esc(a)}<br>B: {esc(b)}</td>'


def _found(c: Cable) -> str:
    if not c.found or c.found == c.id:
        return ""
    return f'<br><small class="sf-found">found: <code>{esc(c.found)}</code></small>'


def html(rows: Sequence[tuple[Cable, Status]]) -> str:
    """The table as a <table> element (`build.cable_rows`)."""
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    body = []
    for c, status in rows:
        ber = f"{number(c.worst_ber)}" if c.worst_ber is not None else NOT_READ
        notes = "".join(f"<br><small>{esc(n)}</small>" for n in c.notes)
        body.append(
            f'<tr class="sf-cable-row" data-serial="{esc(c.serial or "")}" '
            f'data-cable="{esc(c.id)}" data-status="{status}">'
            + _pair(c, lambda e: e.serial)
            + f"<td><code>{esc(c.id)}</code>{_found(c)}</td>"
            + f"<td>{esc(label(c.a))}</td><td>{esc(label(c.b))}</td>"
            + _pair(c, lambda e: e.vendor)
            + _pair(c, lambda e: e.part)
            + _pair(c, lambda e: _len(e.length_m))
            + _pair(c, lambda e: e.type)
            + _pair(c, lambda e: _speed(e.speed_mbps))
            + _pair(c, lambda e: e.fec)
            + f"<td>{esc(ber)}</td>"
            + f'<td style="background:{FILL[status]};color:{STROKE[status]};'
            f'font-weight:bold">{esc(LABEL[status])}{notes}</td></tr>'
        )
    return (
        '<table class="sf-inventory"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )
