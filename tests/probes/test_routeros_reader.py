"""The RouterOS reader (routeros.read) beyond the golden samples (tests/data/routeros-*, error
texts among them): forms no sample holds, refusals, and layouts (REST and console reading the
same: tests/sim/test_switch_console.py). That it is total: every routeros-* parser is read()
then rows, fuzzed on any text and on mutated samples in tests/probes/test_properties.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.routeros import parse_routeros_monitor, read

from .golden import DATA, sample

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

READS = [
    # `:put [hw-info wlan1 as-value]`, `:put ([/ip route print as-value where ...])` (MikroTik
    # manual, developer-guides/scripting/scripting-tips-and-tricks.md, mikrotik-docs-i18n
    # @47374bf2): a field without `=` continues a list.
    (
        "ranges=2312-2732/5/b;g;gn20;2484-2484/5/b;rx-chains=0;1;tx-chains=0;1\n",
        [{"ranges": "2312-2732/5/b;g;gn20;2484-2484/5/b", "rx-chains": "0;1", "tx-chains": "0;1"}],
    ),
    (
        ".id=*400ae12f;distance=255;gateway=ether1\n",
        [{".id": "*400ae12f", "distance": "255", "gateway": "ether1"}],
    ),
    # as-value records back to back, each starting with .id (RouterOS 7.20.8, index id
    # 63101946964).
    (
        ".id=*2;name=ether1;tx-drop=0;.id=*3;name=ether2;tx-drop=4",
        [
            {".id": "*2", "name": "ether1", "tx-drop": "0"},
            {".id": "*3", "name": "ether2", "tx-drop": "4"},
        ],
    ),
    # `/ip dhcp-server network print` (RouterOS 7, index id 37857795964): a list continues
    # under its column on the next line.
    (
        "Columns: ADDRESS, DNS-SERVER\n# ADDRESS          DNS-SERVER\n0 192.168.10.0/24  1.1.1.1\n"
        "                   8.8.8.8\n",
        [
            {
                ".index": "0",
                ".flags": "",
                "address": "192.168.10.0/24",
                "dns-server": "1.1.1.1,8.8.8.8",
            }
        ],
    ),
    # The table shape measured on RouterOS 7.20.8 (index id 63101946964), abridged: the comment
    # line belongs to the next row; flag letters become properties by the legend.
    (
        "Flags: R - RUNNING; S - SLAVE\nColumns: NAME, RX-BYTE\n#    NAME              RX-BYTE\n"
        "0 R  ether1     79 740 110 494\n;;; defconf\n5 S  bridge    123 021 591 925\n",
        [
            {
                "running": "true",
                "slave": "false",
                ".index": "0",
                ".flags": "R",
                "name": "ether1",
                "rx-byte": "79 740 110 494",
            },
            {
                "running": "false",
                "slave": "true",
                ".index": "5",
                ".flags": "S",
                "name": "bridge",
                "rx-byte": "123 021 591 925",
                "comment": "defconf",
            },
        ],
    ),
    # terse: quoted values unescaped, unquoted values run to the next ` key=`.
    (
        ' 0 R  name="qsfp56-dd-1-1" comment="leg \\"one\\""\n'
        " 1 X  comment=spare, do not use mtu=1\ngarbage line\n",
        [
            {".index": "0", ".flags": "R", "name": "qsfp56-dd-1-1", "comment": 'leg "one"'},
            {".index": "1", ".flags": "X", "comment": "spare, do not use", "mtu": "1"},
        ],
    ),
    # A name holding a space prints like two columns; no other row fills two, so one item.
    (
        "      name: ether3 UniFi1\n  rx-bytes: 178 663 398 808\n",
        [{"name": "ether3 UniFi1", "rx-bytes": "178 663 398 808"}],
    ),
    ('{"name":"a","mtu":9000,"on":true}', [{"name": "a", "mtu": "9000", "on": "true"}]),
]


@pytest.mark.parametrize(("text", "rows"), READS)
def test_forms_without_a_golden_sample(text: str, rows: list[dict[str, str]]) -> None:
    assert list(read(text, "t")) == rows


def test_crlf_and_colour_escapes_change_nothing() -> None:
    for path in sorted(DATA.glob("routeros-*/*.txt")):
        if path.name.startswith(("synthetic-error-", "synthetic-refused-")):
            continue
        text = sample(f"{path.parent.name}/{path.name}")
        assert read("\x1b[m" + text.replace("\n", "\r\n"), "t") == read(text, "t"), path.name


def test_values_that_look_like_refusals_are_read() -> None:
    # Refusals themselves: the synthetic-refused-* samples in tests/data/routeros-monitor.
    (row,) = read(" 0 R  name=ether1 comment=syntax error here\n", "t")
    assert row["comment"] == "syntax error here"
    assert read("   last-error: failure: x\n", "t") == ({"last-error": "failure: x"},)


def test_a_monitor_of_two_interfaces_is_not_one_legs_read() -> None:
    # The other error texts: the synthetic-error-* samples in tests/data/routeros-*.
    with pytest.raises(ParseError) as err:
        parse_routeros_monitor("  name: ether2  ether3\nstatus: link-ok link-ok\n")
    assert str(err.value).startswith(
        "routeros monitor: 2 interfaces (ether2, ether3) where one was asked for"
    )


# Layouts as RouterOS lays them out: widths from the widest cell, numbers right-aligned and
# grouped by spaces, text left-aligned, neighbouring columns one or two spaces apart.
names = st.from_regex(r"[a-z][a-z0-9-]{0,13}[0-9]", fullmatch=True)
keys = st.from_regex(r"[a-z][a-z0-9-]{1,20}", fullmatch=True).filter(lambda k: k != "name")
words = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9.,/+-]{0,11}", fullmatch=True)
numbers = st.integers(0, 10**15).map(lambda n: f"{n:,}".replace(",", " "))


def _cell(text: str, width: int, right: bool) -> str:
    return text.rjust(width) if right else text.ljust(width)


@FAST
@given(
    items=st.lists(names, min_size=2, max_size=6, unique=True),
    columns=st.lists(
        st.tuples(keys, st.booleans()), min_size=1, max_size=6, unique_by=lambda c: c[0]
    ),
    sep=st.sampled_from([1, 2]),
    data=st.data(),
)
def test_side_by_side_and_table_layouts_read_back(
    items: list[str], columns: list[tuple[str, bool]], sep: int, data: st.DataObject
) -> None:
    values = {k: [data.draw(numbers if right else words) for _ in items] for k, right in columns}
    # key: value, one column per item (print stats: numbers; monitor: text).
    right = data.draw(st.booleans())
    cells = {"name": items} | {
        k: [data.draw(numbers if right else words) for _ in items] for k, _ in columns
    }
    width = [max(len(v[j]) for v in cells.values()) for j in range(len(items))]
    key_w = max(map(len, cells)) + 2
    text = "".join(
        f"{k + ':':>{key_w}} "
        + " ".join(_cell(v, w, right) for v, w in zip(vs, width, strict=True)).rstrip()
        + "\n"
        for k, vs in cells.items()
    )
    assert [dict(r) for r in read(text, "t")] == [
        {k: vs[j] for k, vs in cells.items()} for j in range(len(items))
    ]
    # A column table: `#` header, index, flag letters, a column per property.
    flags = [data.draw(st.sampled_from(["", "R", "X", "XR"])) for _ in items]
    labels = ["NAME", *(k.upper() for k, _ in columns)]
    table = [items, *(values[k] for k, _ in columns)]
    aligned = [False, *(r for _, r in columns)]
    width = [max(len(labels[j]), *map(len, table[j])) for j in range(len(labels))]
    fw = max(map(len, flags))
    lines = ["Flags: X - DISABLED; R - RUNNING", "#".rjust(1) + " " + " " * (fw + 1 if fw else 0)]
    lines[1] += (" " * sep).join(_cell(lab, width[j], aligned[j]) for j, lab in enumerate(labels))
    for i in range(len(items)):
        head = f"{i} " + (flags[i].ljust(fw) + " " if fw else "")
        lines.append(
            head
            + (" " * sep).join(_cell(table[j][i], width[j], aligned[j]) for j in range(len(labels)))
        )
    rows = read("\n".join(lines) + "\n", "t")
    assert [(r[".flags"], r["running"], r["disabled"]) for r in rows] == [
        (f, str("R" in f).lower(), str("X" in f).lower()) for f in flags
    ]
    assert [[r["name"], *(r[k] for k, _ in columns)] for r in rows] == [
        [items[i], *(values[k][i] for k, _ in columns)] for i in range(len(items))
    ]
