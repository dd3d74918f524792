"""The RouterOS grammar is total (a result or ParseError, on any text) and reads back what the
console's layouts put down: terse lines, column tables, and key: value columns laid out the way
RouterOS lays them out (widths from the widest cell, numbers right-aligned and grouped by spaces,
text left-aligned, neighbouring columns one or two spaces apart)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes import ParseError, to_jsonable
from pytest_sparkfabric.probes.routeros_reads import (
    parse_bridge_ports,
    parse_ethernet,
    parse_ethernet_stats,
    parse_qos_ports,
    parse_routeros_monitor,
    parse_routeros_monitors,
    parse_system_resource,
)
from pytest_sparkfabric.probes.routeros_table import parse_legend, parse_table
from pytest_sparkfabric.probes.routeros_text import (
    failure_line,
    parse_as_value,
    parse_kv,
    parse_kv_columns,
    parse_rest_json,
    parse_terse,
)

from ._samples import DATA, sample

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PARSERS: dict[str, Callable[[str], object]] = {
    "kv": parse_kv,
    "kv_columns": parse_kv_columns,
    "terse": parse_terse,
    "table": parse_table,
    "as_value": parse_as_value,
    "rest_json": parse_rest_json,
    "failure_line": failure_line,
    "legend": parse_legend,
    "ethernet": parse_ethernet,
    "bridge": parse_bridge_ports,
    "qos": parse_qos_ports,
    "monitors": parse_routeros_monitors,
    "monitor": parse_routeros_monitor,
    "resource": parse_system_resource,
    "stats": parse_ethernet_stats,
}

SAMPLE_LINES = sorted(
    {
        line
        for path in DATA.glob("routeros-*/*.txt")
        for line in path.read_bytes().decode("utf-8").split("\n")
    }
)
line = st.one_of(
    st.sampled_from(SAMPLE_LINES),
    st.text(alphabet=' \t#;:=",.-_*0123456789abcdefRSXHDIname', max_size=40),
)


@FAST
@given(lines=st.lists(line, max_size=12), data=st.data())
def test_every_routeros_parser_is_total(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines)
    for name, parser in PARSERS.items():
        try:
            to_jsonable(parser(text))
        except ParseError as err:
            assert err.tool and err.missing, name
    tail = data.draw(st.text(max_size=60))
    for parser in PARSERS.values():
        with contextlib.suppress(ParseError):
            parser(tail)


@FAST
@given(data=st.data())
def test_monitor_keys_survive_log_lines(data: st.DataObject) -> None:
    text = sample("routeros-monitor/monitor-once-ether1-log-line-interleaved.txt")
    log = st.sampled_from(
        (
            "17:20:06 echo: system,error,critical login failure for user admin via ssh",
            "18:01:44 system,info,account user admin logged in from 10.0.0.9 via ssh",
        )
    )
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 4))):
        lines.insert(data.draw(st.integers(0, len(lines))), data.draw(log))
    r = parse_routeros_monitor("\n".join(lines))
    assert (r.status, r.rate_gbps, r.full_duplex) == ("link-ok", 1.0, True)


# ---------------------------------------------------------------- layouts read back

names = st.from_regex(r"[a-z][a-z0-9-]{0,13}[0-9]", fullmatch=True)
keys = st.from_regex(r"[a-z][a-z0-9-]{1,20}", fullmatch=True).filter(lambda k: k != "name")
counts = st.integers(0, 10**15)
words = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9.,/+-]{0,11}", fullmatch=True)


def grouped(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def kv_layout(rows: list[tuple[str, list[str]]], right: bool, sep: int) -> str:
    """Keys right-aligned to the colon, one column per item, each as wide as its widest cell."""
    width = [max(len(values[j]) for _, values in rows) for j in range(len(rows[0][1]))]
    key_w = max(len(k) for k, _ in rows) + 2
    out = []
    for key, values in rows:
        cells = [v.rjust(w) if right else v.ljust(w) for v, w in zip(values, width, strict=True)]
        out.append(f"{key + ':':>{key_w}} " + (" " * sep).join(cells).rstrip())
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("numbers", [True, False], ids=["stats", "monitor"])
@FAST
@given(
    ifs=st.lists(names, min_size=2, max_size=6, unique=True),
    keys_=st.lists(keys, min_size=1, max_size=8, unique=True),
    data=st.data(),
)
def test_key_value_columns_read_back(
    numbers: bool, ifs: list[str], keys_: list[str], data: st.DataObject
) -> None:
    """Counters right-aligned and grouped (print stats), text left-aligned (monitor)."""
    cell = st.builds(grouped, counts) if numbers else words
    values = {k: [data.draw(cell) for _ in ifs] for k in keys_}
    rows = parse_kv_columns(kv_layout([("name", ifs), *values.items()], numbers, 1))
    assert [r["name"] for r in rows] == ifs
    for j, row in enumerate(rows):
        assert {k: row[k] for k in keys_} == {k: values[k][j] for k in keys_}


@FAST
@given(
    n=st.integers(1, 12),
    cols=st.lists(st.tuples(keys, st.booleans()), min_size=1, max_size=6, unique_by=lambda c: c[0]),
    sep=st.sampled_from([1, 2]),
    data=st.data(),
)
def test_tables_read_back(
    n: int, cols: list[tuple[str, bool]], sep: int, data: st.DataObject
) -> None:
    flags = [data.draw(st.sampled_from(["", "R", "X", "DH", "H", "XS"])) for _ in range(n)]
    names_ = data.draw(st.lists(names, min_size=n, max_size=n, unique=True))
    cells: list[list[str]] = [names_]
    for _, numeric in cols:
        cells.append(
            [
                grouped(data.draw(counts)) if numeric else data.draw(words.filter(str.isalnum))
                for _ in range(n)
            ]
        )
    labels = ["NAME", *(k.upper() for k, _ in cols)]
    right = [False, *(numeric for _, numeric in cols)]
    width = [max(len(labels[j]), *(len(c) for c in cells[j])) for j in range(len(labels))]
    iw, fw = len(str(n - 1)), max(len(f) for f in flags)

    def pad(text: str, j: int) -> str:
        return text.rjust(width[j]) if right[j] else text.ljust(width[j])

    head = "#".rjust(iw) + " " + (" " * fw + " " if fw else "")
    lines = [
        "Flags: X - DISABLED; R - RUNNING",
        head + (" " * sep).join(pad(lab, j) for j, lab in enumerate(labels)),
    ]
    for i in range(n):
        row = str(i).rjust(iw) + " " + (flags[i].ljust(fw) + " " if fw else "")
        lines.append(row + (" " * sep).join(pad(cells[j][i], j) for j in range(len(labels))))
    table = parse_table("\n".join(lines) + "\n")
    assert table.legend == {"X": "disabled", "R": "running"}
    assert [r[".flags"] for r in table.rows] == flags
    for i, got in enumerate(table.rows):
        assert got["name"] == names_[i]
        assert [got[k] for k, _ in cols] == [cells[j + 1][i] for j in range(len(cols))]


values_ = st.from_regex(r"[A-Za-z0-9:/.,-]+( [A-Za-z0-9:/.,-]+){0,2}", fullmatch=True)


@FAST
@given(
    items=st.lists(st.dictionaries(keys, values_, min_size=1, max_size=6), min_size=1, max_size=5),
    data=st.data(),
)
def test_terse_reads_back(items: list[dict[str, str]], data: st.DataObject) -> None:
    lines = []
    for i, item in enumerate(items):
        flags = data.draw(st.sampled_from(["", "R", "XS", "D H"]))
        pairs = " ".join(f"{k}={v}" for k, v in item.items())
        lines.append(f"{i:>2} {flags:<3} {pairs}")
    rows = parse_terse("\n".join(lines))
    assert [{k: v for k, v in r.items() if not k.startswith(".")} for r in rows] == items
