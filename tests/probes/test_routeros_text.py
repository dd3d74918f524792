"""The RouterOS console grammar (routeros_text), quirk by quirk, on real snippets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.routeros_reads import (
    parse_bridge_ports,
    parse_ethernet,
    parse_ethernet_stats,
    parse_routeros_monitor,
    parse_system_resource,
)
from pytest_sparkfabric.probes.routeros_table import parse_legend, parse_table
from pytest_sparkfabric.probes.routeros_text import (
    check_failure,
    failure_line,
    is_as_value,
    parse_as_value,
    parse_kv,
    parse_kv_columns,
    parse_rest_json,
    parse_terse,
)

from ._samples import sample

# `:put [hw-info wlan1 as-value]` and `:put ([/ip route print as-value where ...])`, MikroTik
# manual, developer-guides/scripting/scripting-tips-and-tricks.md (mikrotik-docs-i18n @47374bf2).
HW_INFO_AS_VALUE = (
    "ranges=2312-2732/5/b;g;gn20;gn40;2484-2484/5/b;g;gn20;gn40;rx-chains=0;1;tx-chains=0;1\n"
)
ROUTE_AS_VALUE = (
    ".id=*400ae12f;distance=255;dst-address=111.111.111.1/32;gateway=ether1;"
    "pref-src=111.111.111.1\n"
)

# `/ip dhcp-server network print` (RouterOS 7, index id 37857795964): a list value continues
# under its column on the next line.
DHCP_NETWORKS = """\
Columns: ADDRESS, GATEWAY, DNS-SERVER
# ADDRESS          GATEWAY       DNS-SERVER
0 192.168.10.0/24  192.168.10.1  1.1.1.1
                                 8.8.8.8
1 192.168.20.0/24  192.168.20.1  1.1.1.1
                                 8.8.8.8
"""


def test_as_value_list_values_and_records() -> None:
    assert is_as_value(HW_INFO_AS_VALUE)
    assert parse_as_value(HW_INFO_AS_VALUE) == (
        {
            "ranges": "2312-2732/5/b;g;gn20;gn40;2484-2484/5/b;g;gn20;gn40",
            "rx-chains": "0;1",
            "tx-chains": "0;1",
        },
    )
    (route,) = parse_as_value(ROUTE_AS_VALUE)
    assert (route[".id"], route["gateway"], route["distance"]) == ("*400ae12f", "ether1", "255")
    # Records back to back, each starting with .id (RouterOS 7.20.8, index id 63101946964).
    two = parse_as_value(
        ".id=*2;disabled=false;name=ether1;running=true;rx-byte=79740110494;rx-drop=0;"
        "tx-drop=0;.id=*3;disabled=false;name=ether2;running=true;rx-byte=12;tx-drop=4"
    )
    assert [(r["name"], r["tx-drop"]) for r in two] == [("ether1", "0"), ("ether2", "4")]
    assert not is_as_value(sample("routeros-resource/system-resource-print-ccr2004-7.12.2.txt"))


def test_as_value_forms_of_the_reads() -> None:
    stats = parse_ethernet_stats(
        ".id=*2;name=ether1;rx-fcs-error=3;rx-pause=0;tx-pause=12;.id=*3;name=ether2;rx-fcs-error=0"
    )
    assert [(s.name, s.rx_fcs_error, s.tx_pause) for s in stats] == [
        ("ether1", 3, 12),
        ("ether2", 0, None),
    ]
    res = parse_system_resource("uptime=1w3d15:41:57;version=7.20.8 (stable);cpu-load=7\n")
    assert (res.cpu_load_pct, res.uptime) == (7, "1w3d15:41:57")


def test_table_list_value_continues_on_next_line() -> None:
    rows = parse_table(DHCP_NETWORKS).rows
    assert [(r["address"], r["gateway"], r["dns-server"]) for r in rows] == [
        ("192.168.10.0/24", "192.168.10.1", "1.1.1.1,8.8.8.8"),
        ("192.168.20.0/24", "192.168.20.1", "1.1.1.1,8.8.8.8"),
    ]


def test_table_comment_line_belongs_to_the_next_row() -> None:
    # The shape measured on RouterOS 7.20.8 (index id 63101946964), abridged to two rows.
    text = (
        "Flags: R - RUNNING; S - SLAVE\n"
        "Columns: NAME, RX-BYTE, TX-BYTE\n"
        "#    NAME              RX-BYTE          TX-BYTE\n"
        "0 R  ether1     79 740 110 494  119 752 269 836\n"
        ";;; defconf\n"
        "5 R  bridge    123 021 591 925   79 688 209 862\n"
    )
    table = parse_table(text)
    assert table.legend == {"R": "running", "S": "slave"}
    assert [(r["name"], r["rx-byte"], r.get("comment")) for r in table.rows] == [
        ("ether1", "79 740 110 494", None),
        ("bridge", "123 021 591 925", "defconf"),
    ]


def test_legend_v6_v7_and_mixed_separators() -> None:
    assert parse_legend("Flags: X - disabled, I - inactive, D - dynamic, H - hw-offload ") == {
        "X": "disabled",
        "I": "inactive",
        "D": "dynamic",
        "H": "hw-offload",
    }
    assert parse_legend(
        "Flags: D - dynamic; X - disabled, R - running; S - slave; P - passthrough "
    ) == {
        "D": "dynamic",
        "X": "disabled",
        "R": "running",
        "S": "slave",
        "P": "passthrough",
    }


def test_terse_quoted_and_unquoted_values() -> None:
    rows = parse_terse(
        ' 0 R  name="qsfp56-dd-1-1" mtu=9000 l2mtu=9216 comment="leg \\"one\\""\n'
        " 1 X  comment=spare leg, do not use name=qsfp56-dd-1-2 mtu=1500\n"
        "garbage line\n"
    )
    assert rows == (
        {
            ".index": "0",
            ".flags": "R",
            "name": "qsfp56-dd-1-1",
            "mtu": "9000",
            "l2mtu": "9216",
            "comment": 'leg "one"',
        },
        {
            ".index": "1",
            ".flags": "X",
            "comment": "spare leg, do not use",
            "name": "qsfp56-dd-1-2",
            "mtu": "1500",
        },
    )


def test_crlf_and_colour_escapes_change_nothing() -> None:
    for name in (
        "routeros-monitor/monitor-once-sfp-sfpplus24-eeprom.txt",
        "routeros-stats/manual-hapac2-ethernet-print-stats-5col-thousands-spaces.txt",
    ):
        text = sample(name)
        crlf = "\x1b[m" + text.replace("\n", "\r\n")
        assert parse_kv_columns(crlf) == parse_kv_columns(text)
    text = sample("routeros-bridge-port/manual-v7-bridge-port-print-DH-flags-columns-line.txt")
    assert parse_bridge_ports(text.replace("\n", "\r\n")) == parse_bridge_ports(text)


def test_name_with_a_space_in_one_column_stays_one_item() -> None:
    rows = parse_kv_columns(
        "                  name: ether3 UniFi1\n"
        "          rx-fcs-error: 12\n"
        "              rx-bytes: 178 663 398 808\n"
    )
    assert rows == ({"name": "ether3 UniFi1", "rx-fcs-error": "12", "rx-bytes": "178 663 398 808"},)


@pytest.mark.parametrize(
    "line",
    [
        "bad command name stats (line 1 column 21)",
        "syntax error (line 1 column 5)",
        "expected end of command (line 1 column 29)",
        "no such item",
        "input does not match any value of interface",
        "not enough permissions (9)",
        "failure: not allowed by device-mode",
    ],
)
def test_console_refusal_is_a_parse_error_naming_the_line(line: str) -> None:
    assert failure_line(f"\r\n{line}\r\n") == line
    with pytest.raises(ParseError) as err:
        parse_routeros_monitor(line + "\n")
    assert str(err.value) == f"routeros monitor: RouterOS refused the command: {line!r}"
    with pytest.raises(ParseError, match="refused the command"):
        parse_ethernet(line)
    with pytest.raises(ParseError, match="refused the command"):
        check_failure(line, "x")


def test_values_that_look_like_refusals_are_not() -> None:
    assert failure_line(" 0 R  name=ether1 comment=syntax error here\n") is None
    assert failure_line("          last-error: failure: x\n") is None


def test_rest_error_bodies_are_parse_errors() -> None:
    with pytest.raises(ParseError) as err:
        parse_rest_json('{"detail":"Session closed","error":400,"message":"Bad Request"}')
    assert str(err.value) == "routeros REST: error 400 Bad Request (Session closed)"
    with pytest.raises(ParseError, match=r"routeros REST: error 404 Not Found$"):
        parse_system_resource('{"error":404,"message":"Not Found"}')
    with pytest.raises(ParseError, match="not JSON"):
        parse_rest_json("[{")


@pytest.mark.parametrize(
    ("parser", "text", "message"),
    [
        (parse_ethernet, "", "routeros /interface ethernet print: no items: neither terse"),
        (parse_ethernet, " 0   interface=ether1 bridge=b\n", "no item has a name"),
        (parse_bridge_ports, " 0 R name=ether1\n", "no item has an interface"),
        (parse_routeros_monitor, "hello\n", "routeros monitor: no 'key: value' line"),
        (parse_system_resource, "", "routeros /system resource: no 'key: value' line"),
        (parse_ethernet_stats, "   name: ether1\n", "no counter (rx-*, tx-*, rs-fec-*)"),
        (parse_routeros_monitor, "   rate: 1Gbps\n", "no 'name:' or 'status:' field"),
    ],
)
def test_error_texts(parser: object, text: str, message: str) -> None:
    assert callable(parser)
    with pytest.raises(ParseError) as err:
        parser(text)
    assert message in str(err.value)


def test_kv_parse_error_without_key_lines() -> None:
    with pytest.raises(ParseError, match="no 'key: value' line"):
        parse_kv("17:20:06 echo: system,error,critical login failure\n")


def test_rest_and_console_forms_give_the_same_dataclass() -> None:
    rest = parse_routeros_monitor(
        '[{"name":"qsfp56-dd-1-1","status":"link-ok","rate":"200Gbps","full-duplex":"true",'
        '"fec":"fec91","auto-negotiation":"disabled"}]'
    )
    cli = parse_routeros_monitor(
        "                name: qsfp56-dd-1-1\n"
        "              status: link-ok\n"
        "    auto-negotiation: disabled\n"
        "                rate: 200Gbps\n"
        "         full-duplex: yes\n"
        "                 fec: fec91\n"
    )
    assert replace(rest, raw={}) == replace(cli, raw={})
    rest_ports = parse_ethernet(
        '[{"name":"qsfp56-dd-1-1","mtu":"9000","l2mtu":"9216","auto-negotiation":"false",'
        '"speed":"200G-baseCR4","running":"true","disabled":"false"}]'
    )
    terse_ports = parse_ethernet(
        " 0 R  name=qsfp56-dd-1-1 default-name=qsfp56-dd-1-1 mtu=9000 l2mtu=9216 "
        "auto-negotiation=no speed=200G-baseCR4\n"
    )
    assert rest_ports == terse_ports
