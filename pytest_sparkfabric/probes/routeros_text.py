"""RouterOS console text: the shapes `print terse`, `print detail`, `monitor ... once`, `print
stats` and `:put [... as-value]` write, read into rows of strings keyed by RouterOS's own names.

Nothing here knows a menu: `routeros_reads` turns the rows into the dataclasses of `routeros`;
column tables are read by `routeros_table`.
The shapes, as real RouterOS 6/7 outputs show them (tests/data/routeros-*/PROVENANCE.md):

- key: value (`monitor once`, `/system resource print`, `print stats`): keys right-aligned
  (a line may be indented one column off, or start with tabs), empty values empty, long values
  wrapped onto indented lines (the SFP `eeprom` dump, link-mode lists ending in `,`), a log line
  printed in between. With several interfaces the values stand in columns, one per interface,
  under a `name:` row: text left-aligned, numbers right-aligned, numbers with a space every three
  digits (`182 334 805 898`) and neighbouring columns one space apart (`0 70 502 669 211`).
- terse / detail: `<index> <flag letters> key=value ...`; values are unquoted even with spaces
  (`comment=this is a comment`, `last-link-up-time=1970-01-01 01:02:03`) or quoted (`name="x"`),
  detail wraps an item onto indented lines and puts `;;; comment` first.
- as-value (`:put [... as-value]`): one line, `key=value` joined by `;`, records back to back,
  each starting with `.id`; values are neither quoted nor escaped.

RouterOS reports a refused command on stdout with exit status 0 (`bad command name`, `syntax
error`, `not enough permissions (9)`, ...): `failure_line` finds it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_sparkfabric.probes import ParseError

Row = dict[str, str]

INDEX = ".index"
"""Row key of the item number a `print` shows (not a RouterOS property)."""
FLAGS = ".flags"
"""Row key of the item's flag letters, e.g. `RS`, `DH`; empty when none."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# Console refusals, as measured on RouterOS 7.20.8 (index id 63101946964: "expected end of
# command", "syntax error", "bad command name", "failure:", "script error:", "not enough
# permissions (9)") and listed by an import scanner (index id 70657704534: "no such item",
# "input does not match any value of", "invalid value for argument").
_FAILURE = re.compile(
    r"^(?:bad command name|syntax error|expected end of command|expected command name|"
    r"failure:|script error:|no such item|not enough permissions|"
    r"input does not match any value of|invalid value for argument|ambiguous value of)",
    re.IGNORECASE,
)


def clean(text: str) -> str:
    """Without colour escapes; CR LF (RouterOS over SSH) and lone CRs become LF."""
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def failure_line(text: str) -> str | None:
    """The line in which RouterOS refused the command, or None."""
    for line in clean(text).split("\n"):
        if _FAILURE.match(line.strip()):
            return line.strip()[:200]
    return None


def check_failure(text: str, what: str) -> None:
    line = failure_line(text)
    if line is not None:
        raise ParseError(what, f"RouterOS refused the command: {line!r}")


# ---------------------------------------------------------------- key: value


_KEY = re.compile(r"^[ \t]*(?P<key>[A-Za-z][A-Za-z0-9_.\-/]*):(?=[ \t]|$)")
TOKEN = re.compile(r"\S+")


@dataclass
class _KvLine:
    key: str
    value: str
    """The text right of the colon, leading blank kept (column positions count from here)."""
    more: list[str]


def _kv_lines(text: str) -> list[_KvLine]:
    out: list[_KvLine] = []
    last: _KvLine | None = None
    for line in clean(text).split("\n"):
        m = _KEY.match(line)
        if m:
            last = _KvLine(m.group("key"), line[m.end() :].rstrip(), [])
            out.append(last)
        elif last is not None and line[:1] in (" ", "\t") and line.strip():
            last.more.append(line.strip())
        else:
            # A log line printed into the session (column 0), an elision, or blank.
            last = None
    return out


def _joined(first: str, more: Sequence[str]) -> str:
    value = first.strip()
    for part in more:
        # A wrapped list (`...,1G-baseT-full,` / `1G-baseX,...`) continues on the next line;
        # anything else (the eeprom hex dump) keeps its line breaks.
        sep = "" if value.endswith(",") or not value else "\n"
        value = f"{value}{sep}{part}"
    return value


def parse_kv(text: str) -> Row:
    """One item's `key: value` lines; indented lines that are no `key:` continue a value."""
    out: Row = {}
    for kv in _kv_lines(text):
        out.setdefault(kv.key, _joined(kv.value, kv.more))
    if not out:
        raise ParseError("routeros", "no 'key: value' line")
    return out


def spans(value: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in TOKEN.finditer(value)]


def _split_cells(
    value: str, starts: Sequence[int], ends: Sequence[int]
) -> list[tuple[int, int] | None] | None:
    """The value's tokens grouped into the columns whose header tokens are (starts, ends):
    right-aligned (each cell ends where its header ends) or left-aligned (each cell starts
    where its header starts). None when neither fits."""
    tokens = spans(value)
    n = len(starts)
    for align in ("right", "left"):
        cells: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        fits = True
        for s, e in tokens:
            if align == "right":
                j = next((j for j in range(n) if e <= ends[j]), None)
                if j is not None and j > 0 and s < ends[j - 1] + 1:
                    j = None
            else:
                j = next((j for j in reversed(range(n)) if s >= starts[j]), None)
            if j is None:
                fits = False
                break
            cells[j].append((s, e))
        if fits and all(
            not c or (c[-1][1] == ends[j] if align == "right" else c[0][0] == starts[j])
            for j, c in enumerate(cells)
        ):
            return [(c[0][0], c[-1][1]) if c else None for c in cells]
    return None


def parse_kv_columns(text: str) -> tuple[Row, ...]:
    """`key: value` output of one item or of several side by side (one column per item,
    under the `name:` row). A name holding a space cannot be told from two columns: RouterOS
    prints both alike; such output is read as one item only when its other rows say so."""
    lines = _kv_lines(text)
    name = next((kv for kv in lines if kv.key == "name"), None)
    if name is not None and len(spans(name.value)) > 1:
        columns = spans(name.value)
        starts, ends = [s for s, _ in columns], [e for _, e in columns]
        rows: list[Row] = [{} for _ in columns]
        fits = True
        for kv in lines:
            cells = _split_cells(kv.value, starts, ends)
            if cells is None:
                fits = False
                break
            for j, cell in enumerate(cells):
                if cell is not None:
                    rows[j].setdefault(kv.key, kv.value[cell[0] : cell[1]])
                elif kv.key not in rows[j]:
                    rows[j][kv.key] = ""
        if fits:
            return tuple(rows)
    return (parse_kv(text),)


# ---------------------------------------------------------------- terse / detail


ITEM = re.compile(r"^[ \t]*(?P<index>\d{1,9})(?=[ \t]|$)(?P<rest>.*)$")
_PAIR_KEY = re.compile(r"(?:(?<=\s)|^)(?P<key>[a-z.][a-z0-9._/-]*)=")


def _pairs(text: str) -> list[tuple[str, str]]:
    """`key=value` pairs; a value runs to the next ` key=` unless it is quoted."""
    out: list[tuple[str, str]] = []
    m = _PAIR_KEY.search(text)
    while m is not None:
        key, at = m.group("key"), m.end()
        if text[at : at + 1] == '"':
            q = re.match(r'"((?:[^"\\]|\\.)*)"', text[at:])
            if q is not None:
                out.append((key, re.sub(r"\\(.)", r"\1", q.group(1))))
                m = _PAIR_KEY.search(text, at + q.end())
                continue
        nxt = _PAIR_KEY.search(text, at)
        out.append((key, text[at : nxt.start() if nxt else len(text)].strip()))
        m = nxt
    return out


def _head(rest: str) -> tuple[str, str] | None:
    """(flag letters, what follows them) of an item line's text after the index."""
    m = re.match(r"^([ \t]*(?:[A-Za-z][ \t]*)*?)(?=;;;|[a-z.][a-z0-9._/-]*=|$)", rest)
    if m is None or (m.end() == len(rest) and rest.strip() and "=" not in rest):
        return None
    return re.sub(r"\s", "", m.group(1)), rest[m.end() :]


def parse_terse(text: str) -> tuple[Row, ...]:
    """`print terse` / `print detail` items, each with `.index` and `.flags` and its pairs;
    a `;;; comment` becomes `comment`."""
    rows: list[Row] = []
    row: Row | None = None
    has_pairs = False
    for line in clean(text).split("\n"):
        m = ITEM.match(line)
        head = _head(m.group("rest")) if m else None
        if m is not None and head is not None:
            flags, body = head
            row = {INDEX: m.group("index"), FLAGS: flags}
            rows.append(row)
            has_pairs = False
            if body.startswith(";;;"):
                row["comment"] = body[3:].strip()
                continue
        elif row is None or not line.strip():
            row = None
            continue
        elif not line[:1].isspace() and not has_pairs and "comment" in row:
            # A long comment wraps onto a line of its own before the item's properties.
            row["comment"] = f"{row['comment']} {line.strip()}".strip()
            continue
        elif not line[:1].isspace():
            continue
        else:
            body = line
        for key, value in _pairs(body.strip()):
            row.setdefault(key, value)
            has_pairs = True
    return tuple(r for r in rows if len(r) > 2)


# ---------------------------------------------------------------- as-value


_AS_VALUE = re.compile(r"^\.?[a-z][a-z0-9._/-]*=[^\n]*;")


def is_as_value(text: str) -> bool:
    stripped = clean(text).strip()
    return "\n" not in stripped and bool(_AS_VALUE.match(stripped))


def parse_as_value(text: str) -> tuple[Row, ...]:
    """`:put [... as-value]`: records back to back; a key seen again starts the next record,
    a field without `=` continues a list value (`rx-chains=0;1`)."""
    rows: list[Row] = []
    row: Row | None = None
    key: str | None = None
    for field in clean(text).replace("\n", "").split(";"):
        name, eq, value = field.partition("=")
        if eq and re.fullmatch(r"\.?[a-z][a-z0-9._/-]*", name.strip()):
            key = name.strip()
            if row is None or key in row:
                row = {}
                rows.append(row)
            row[key] = value.strip()
        elif row is not None and key is not None:
            row[key] = f"{row[key]};{field.strip()}"
    return tuple(rows)


# ---------------------------------------------------------------- REST JSON


def looks_like_json(text: str) -> bool:
    return clean(text).lstrip()[:1] in ("[", "{")


def parse_rest_json(text: str) -> tuple[Row, ...]:
    """A REST reply: a list of objects (or one object), every value kept as a string."""
    try:
        data: Any = json.loads(text)
    except (ValueError, RecursionError):
        raise ParseError("routeros REST", "reply is not JSON") from None
    items = data if isinstance(data, list) else [data]
    out: list[Row] = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ParseError("routeros REST", "reply is not a list of objects")
        if "error" in item and "message" in item and len(items) == 1:
            detail = f" ({item['detail']})" if item.get("detail") else ""
            raise ParseError("routeros REST", f"error {item['error']} {item['message']}{detail}")
        out.append({str(k): v if isinstance(v, str) else json.dumps(v) for k, v in item.items()})
    return tuple(out)
