"""The console commands sent to the switch: built from checked names, and only reads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.measure.switch import Reads
from pytest_sparkfabric.probes.routeros_commands import (
    BRIDGE_PORT,
    ETHERNET,
    QOS_PORT,
    RESOURCE,
    check_leg_name,
    command_problem,
    monitor_command,
    stats_command,
)


def test_one_pass_reads_everything_rest_reads_plus_counters() -> None:
    legs = ["qsfp56-dd-1-1", "100"]
    sent = [ETHERNET, *map(monitor_command, legs), BRIDGE_PORT, QOS_PORT, RESOURCE]
    sent += map(stats_command, legs)
    assert sent == [
        "/interface ethernet print terse without-paging",
        "/interface ethernet monitor qsfp56-dd-1-1 once",
        # A bare number would be an item number: the all-digit leg is found by its name.
        '/interface ethernet monitor [find name="100"] once',
        "/interface bridge port print terse without-paging",
        "/interface ethernet switch qos port print terse without-paging",
        "/system resource print",
        '/interface ethernet print stats without-paging where name="qsfp56-dd-1-1"',
        '/interface ethernet print stats without-paging where name="100"',
    ]
    assert [command_problem(c) for c in sent] == [None] * len(sent)


class _Console:
    """Answers the two per-leg reads for an interface named `1`, as RouterOS prints them."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def run(self, command: str) -> str:
        assert command_problem(command) is None, command
        self.sent.append(command)
        if "monitor" in command:
            return "        name: 1\r\n      status: link-ok\r\n        rate: 200Gbps\r\n"
        return "              name: 1\r\n      rx-fcs-error: 0\r\n      rx-pause: 12 345\r\n"


def test_an_all_digit_leg_is_read_over_the_console() -> None:
    console = _Console()
    reads = Reads(console=console)
    assert reads.monitor("1").status == "link-ok"
    assert reads.stats(["1"])["1"].counters["rx-pause"] == 12345
    assert console.sent == [
        '/interface ethernet monitor [find name="1"] once',
        '/interface ethernet print stats without-paging where name="1"',
    ]


@pytest.mark.parametrize(
    "name", ["ether1;/system reboot", "-rf", ".hidden", 'x"y', "a b", "x" * 65]
)
def test_leg_names_are_checked_with_the_fix_in_the_message(name: str) -> None:
    with pytest.raises(ValueError) as err:
        monitor_command(name)
    with pytest.raises(ValueError, match="is not a switch interface name"):
        stats_command(name)
    assert str(err.value) == (
        f"{name!r} is not a switch interface name the suite sends: use letters, digits, "
        "'.', '_' and '-' only, at most 64, not starting with '.' or '-'"
    )
    assert check_leg_name("7") == "7"


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        # Reads: no problem.
        ("/interface/ethernet/print/terse", None),
        ("/interface ethernet monitor sfp-sfpplus1,sfp-sfpplus2 once", None),
        ('/interface ethernet monitor "1" once as-value', None),
        ('/interface ethernet print stats where name="a" or name=b', None),
        ("/interface ethernet get ether1 rx-fcs-error", None),
        ("/ip address print detail", None),
        ("/interface ethernet set ether1 mtu=9000", "has no verb among print, monitor, get"),
        ("/interface ethernet reset-counters ether1", "has no verb among print, monitor, get"),
        ("/export", "has no verb among print, monitor, get"),
        ("/interface print; /system reboot", "holds ';': one plain command only"),
        ("/interface print\n/system reboot", "holds '\\n': one plain command only"),
        (":put [/interface print as-value]", "holds ':', '[', ']': one plain command only"),
        ("/interface print file=x", "argument 'file=x' is not one a read of 'print' takes"),
        ("/interface print interval=1", "argument 'interval=1' is not one a read"),
        ("/interface print follow", "argument 'follow' is not one a read of 'print' takes"),
        ("/interface ethernet monitor ether1", "monitor needs one interface (list) and 'once'"),
        ("/interface ethernet monitor ether1 once do=x", "argument 'do=x' is not one a read"),
        ("interface print", "does not start with a menu path ('/...')"),
        ("/Interface print", "menu path 'Interface' is not words of a-z, 0-9, '-'"),
        ("/interface  print", "holds two spaces in a row"),
        ('/interface print where name="x" or', "ends with 'or'"),
        ("/interface print where mtu=1", "is not name=... [or name=...]"),
        ("/interface ethernet get ether1 a b", "get needs an item and at most one property"),
        ("/interface ethernet monitor where name=x", "'where' without a print"),
        ("", "holds nothing: one plain command only"),
        ("/interface print $x", "holds '$'"),
        # `[find name="..."]` exactly, and only as monitor's one item.
        ('/interface ethernet monitor [find name="1"] [find name="2"] once', "needs one interface"),
        ('/interface ethernet monitor [find name="1"],x once', "argument '[find name=\"1\"],x'"),
        ('/interface ethernet get [find name="1"] mtu', "argument '[find name=\"1\"]' is not"),
        ('/interface print where name=[find name="1"]', "is not name=... [or name=...]"),
        ("/interface ethernet monitor [find] once", "holds '[', ']'"),
        ("/interface ethernet monitor [find name=1] once", "holds '[', ']'"),
        ('/interface ethernet monitor [find where name="1"] once', "holds '[', ']'"),
        ('/interface ethernet monitor [find name="1"; /system reboot] once', "holds ';', '['"),
        ('/interface ethernet monitor [find name="1"] once do=x', "argument 'do=x'"),
    ],
)
def test_only_reads_pass_and_anything_else_is_refused_with_the_reason(
    command: str, problem: str | None
) -> None:
    why = command_problem(command)
    assert why is None if problem is None else why is not None and problem in why


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.text('/ interfacemon"[]find=,;1', max_size=60))
def test_read_only_check_is_total(command: str) -> None:
    why = command_problem(command)
    assert why is None or isinstance(why, str)
    if why is None:
        words = command.replace("/", " ").split()
        assert any(v in words for v in ("print", "monitor", "get"))
        assert not any(w in command for w in (";", "$", "\n", "set ", "remove", "add "))
        assert "[" not in command or (
            "monitor" in words and command.count("[") == 1 and '[find name="' in command
        )
