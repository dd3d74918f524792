"""RouterOS `print` column tables: a `Flags:` legend, a v7 `Columns:` line, a `#` header row,
then one row per item.

v6 prints every flag in the legend (`X - disabled, R - running, S - slave`), v7 only those in use
(`D - DYNAMIC; H - HW-OFFLOAD`); v7's `Columns:` line may disagree with the table (the
QoS manual's lists 6 columns over a 7-column table): the `#` header row is the truth. Cells are
left-aligned (text) or right-aligned (numbers, grouped by spaces) to their header label;
neighbouring columns stand one (v6) or two (v7) spaces apart; blank cells are blank; a `;;;
comment` line comes before its row, and a list value continues under its column on the next
line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.routeros_text import FLAGS, INDEX, ITEM, TOKEN, Row, clean, spans


@dataclass(frozen=True)
class Table:
    legend: Mapping[str, str]
    """Flag letter -> what it means, lower case (`H` -> `hw-offload`)."""
    rows: tuple[Row, ...]


_HEADER = re.compile(r"^[ \t]*#(?:[ \t]+[A-Z][A-Za-z0-9-]*)+[ \t]*$")
_LEGEND_ITEM = re.compile(r"(?:^|[,;])\s*([A-Za-z]) - ([A-Za-z][A-Za-z0-9-]*(?: [a-z][a-z-]*)*)")


def parse_legend(text: str) -> dict[str, str]:
    """The `Flags:` line's letters: `X - disabled, R - running` or `D - DYNAMIC; H - HW-OFFLOAD`."""
    legend: dict[str, str] = {}
    for line in clean(text).split("\n"):
        if line.strip().startswith("Flags:"):
            for letter, meaning in _LEGEND_ITEM.findall(line.strip()[6:].strip()):
                legend[letter] = meaning.lower().replace(" ", "-")
    return legend


def has_table(text: str) -> bool:
    return any(_HEADER.match(line) for line in clean(text).split("\n"))


def _column_of(
    s: int, e: int, labels: Sequence[tuple[str, int, int]], anchored: bool
) -> int | None:
    for j, (_, ls, le) in enumerate(labels):
        if s == ls or e == le:
            return j
    if anchored:
        return None
    overlap = [(min(e, le) - max(s, ls), j) for j, (_, ls, le) in enumerate(labels)]
    best = max(overlap)
    if best[0] > 0:
        return best[1]
    return min((min(abs(s - le), abs(ls - e)), j) for j, (_, ls, le) in enumerate(labels))[1]


def _cells(line: str, labels: Sequence[tuple[str, int, int]]) -> dict[int, str]:
    """A row's cells by column. A token that starts or ends with a header label is anchored
    to it. Digit groups one space before an anchored group belong to its number
    (`205 149 015`: numbers are right-aligned); then a token one space after an anchored one
    continues its text (`hAP ax lite`: text is left-aligned)."""
    tokens = spans(line)
    col = [_column_of(s, e, labels, True) for s, e in tokens]
    texts = [line[s:e] for s, e in tokens]
    for i in reversed(range(len(tokens) - 1)):
        if (
            col[i] is None
            and col[i + 1] is not None
            and tokens[i][1] + 1 == tokens[i + 1][0]
            and re.fullmatch(r"\d{1,3}", texts[i])
            and re.fullmatch(r"\d{3}", texts[i + 1])
        ):
            col[i] = col[i + 1]
    for i in range(1, len(tokens)):
        if col[i] is None and col[i - 1] is not None and tokens[i - 1][1] + 1 == tokens[i][0]:
            col[i] = col[i - 1]
    cells: dict[int, list[tuple[int, int]]] = {}
    for i, (s, e) in enumerate(tokens):
        j = col[i] if col[i] is not None else _column_of(s, e, labels, False)
        assert j is not None
        cells.setdefault(j, []).append((s, e))
    return {j: line[c[0][0] : c[-1][1]] for j, c in cells.items()}


def parse_table(text: str) -> Table:
    """A `print` column table: rows keyed by the header labels in lower case (`MAC-ADDRESS`
    -> `mac-address`), plus `.index` and `.flags`; blank cells are left out."""
    lines = clean(text).split("\n")
    at = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if at is None:
        raise ParseError("routeros print", "no '#  NAME ...' header row of a column table")
    header = lines[at]
    labels = [(m.group().lower(), m.start(), m.end()) for m in TOKEN.finditer(header)][1:]
    first = labels[0][1]
    rows: list[Row] = []
    comment: str | None = None
    for line in lines[at + 1 :]:
        stripped = line.strip()
        if stripped.startswith(";;;"):
            comment = stripped[3:].strip()
            continue
        m = ITEM.match(line)
        if m is None:
            if rows and line[:1].isspace() and stripped:
                # A list value continues under its column on the next line.
                for j, cell in _cells(line, labels).items():
                    key = labels[j][0]
                    rows[-1][key] = f"{rows[-1][key]},{cell}" if key in rows[-1] else cell
            continue
        row: Row = {INDEX: m.group("index"), FLAGS: ""}
        body = " " * m.start("rest") + m.group("rest")
        if re.fullmatch(r"[ \tA-Za-z]*", body[:first]):
            row[FLAGS] = re.sub(r"\s", "", body[:first])
            body = " " * first + body[first:]
        for j, cell in _cells(body, labels).items():
            row[labels[j][0]] = cell
        if comment is not None:
            row.setdefault("comment", comment)
            comment = None
        rows.append(row)
    return Table(parse_legend("\n".join(lines[:at])), tuple(rows))
