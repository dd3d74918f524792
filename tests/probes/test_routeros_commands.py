"""The console commands sent to the switch: built from checked names, and only reads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes.routeros_commands import (
    check_leg_name,
    command_problem,
    is_read_only,
    login_user,
    monitor_command,
    stats_command,
    switch_reads,
)

LEGS = ["qsfp56-dd-1-1", "qsfp56-dd-1-5"]


def test_one_pass_reads_everything_rest_reads_plus_counters() -> None:
    reads = switch_reads(LEGS)
    assert [(r.name, r.leg, r.command) for r in reads] == [
        ("ethernet", None, "/interface ethernet print terse without-paging"),
        ("monitor", "qsfp56-dd-1-1", "/interface ethernet monitor qsfp56-dd-1-1 once"),
        ("monitor", "qsfp56-dd-1-5", "/interface ethernet monitor qsfp56-dd-1-5 once"),
        ("bridge-port", None, "/interface bridge port print terse without-paging"),
        ("qos-port", None, "/interface ethernet switch qos port print terse without-paging"),
        ("resource", None, "/system resource print"),
        (
            "stats",
            "qsfp56-dd-1-1",
            '/interface ethernet print stats without-paging where name="qsfp56-dd-1-1"',
        ),
        (
            "stats",
            "qsfp56-dd-1-5",
            '/interface ethernet print stats without-paging where name="qsfp56-dd-1-5"',
        ),
    ]
    for read in reads:
        assert is_read_only(read.command), (read.command, command_problem(read.command))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ether1;/system reboot", "holds"),
        ("-rf", "not starting with '.' or '-'"),
        (".hidden", "not starting with '.' or '-'"),
        ('x"y', "use letters, digits, '.', '_' and '-' only"),
        ("a b", "use letters, digits"),
        ("x" * 65, "at most 64"),
        ("", "is not a switch interface name"),
        ("7", "is all digits: RouterOS would take it for an item number"),
    ],
)
def test_leg_names_are_checked_with_the_fix_in_the_message(name: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        switch_reads(["qsfp56-dd-1-1", name])
    assert f"{name!r}" in str(err.value)
    if message != "holds":
        assert message in str(err.value)
    with pytest.raises(ValueError):
        monitor_command(name)
    with pytest.raises(ValueError):
        stats_command(name)


def test_leg_name_check_message_in_full() -> None:
    with pytest.raises(ValueError) as err:
        check_leg_name("ether1,ether2")
    assert str(err.value) == (
        "'ether1,ether2' is not a switch interface name the suite sends: use letters, digits, "
        "'.', '_' and '-' only, at most 64, not starting with '.' or '-'"
    )


@pytest.mark.parametrize(
    "command",
    [
        "/interface ethernet print terse without-paging",
        "/interface/ethernet/print/terse",
        "/interface ethernet monitor sfp-sfpplus1,sfp-sfpplus2 once",
        "/interface ethernet monitor ether1 once as-value",
        '/interface ethernet print stats where name="a" or name=b',
        "/interface ethernet get ether1 rx-fcs-error",
        "/system resource print",
        "/ip address print detail",
    ],
)
def test_reads_are_read_only(command: str) -> None:
    assert command_problem(command) is None


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("/interface ethernet set ether1 mtu=9000", "has no verb among print, monitor, get"),
        ("/interface ethernet reset-counters ether1", "has no verb among print, monitor, get"),
        ("/system reboot", "has no verb among print, monitor, get"),
        ("/export", "has no verb among print, monitor, get"),
        ("/interface bridge port remove 0", "has no verb"),
        ("/interface print; /system reboot", "holds ';': one plain command only"),
        ("/interface print\n/system reboot", "holds '\\n': one plain command only"),
        (":put [/interface print as-value]", "holds ':', '[', ']': one plain command only"),
        ("/interface print file=x", "argument 'file=x' is not one a read of 'print' takes"),
        ("/interface print interval=1", "argument 'interval=1' is not one a read"),
        ("/interface print follow", "argument 'follow' is not one a read of 'print' takes"),
        ("/interface ethernet monitor ether1", "monitor needs one interface (list) and 'once'"),
        ("/interface ethernet monitor ether1 once do=x", "argument 'do=x' is not one a read"),
        ("/interface ethernet monitor once", "monitor needs one interface"),
        ("interface print", "does not start with a menu path ('/...')"),
        ("/Interface print", "menu path 'Interface' is not words of a-z, 0-9, '-'"),
        ("/interface  print", "holds two spaces in a row"),
        ('/interface print where name="x" or', "ends with 'or'"),
        ("/interface print where mtu=1", "is not name=... [or name=...]"),
        ("/interface ethernet get ether1 a b", "get needs an item and at most one property"),
        ("/interface ethernet monitor where name=x", "'where' without a print"),
        ("", "holds nothing: one plain command only"),
        ("/interface print $x", "holds '$'"),
    ],
)
def test_anything_else_is_refused_with_the_reason(command: str, problem: str) -> None:
    why = command_problem(command)
    assert why is not None and problem in why
    assert not is_read_only(command)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_read_only_check_is_total(command: str) -> None:
    why = command_problem(command)
    assert why is None or isinstance(why, str)
    if why is None:
        words = command.replace("/", " ").split()
        assert any(v in words for v in ("print", "monitor", "get"))
        assert not any(w in command for w in (";", "[", "$", "\n", "set ", "remove", "add "))


def test_login_user_turns_off_colours_and_terminal_detection() -> None:
    assert login_user("sparkfabric") == "sparkfabric+ct"
