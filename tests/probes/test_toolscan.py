"""The preflight script's builder and the parser of what it prints."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.toolscan import (
    Found,
    Lookups,
    SudoAnswer,
    build_preflight,
    parse_preflight,
)

AR = "~/nccl-tests/build/all_reduce_perf"
# What the script prints on a stock DGX OS node (the simulator's stock profile, as bash/dash
# print it: `command -v` prints nothing for a missing command; sudo -n -l asks for a password).
STOCK = (
    "tool\tib_write_bw\t\n"
    "tool\tethtool\t/usr/sbin/ethtool\n"
    f"tool\t{AR}\t\n"
    "sudo\tethtool -m enp1s0f1np1\t1\tsudo: a password is required\n"
    "socket\t/run/lldpd.socket\tno\n"
    "lib\tlibnccl.so.2\t/home/u/nccl/build/lib/libnccl.so.2* /usr/lib/*-linux-gnu/libnccl.so.2.*\n"
    "version\tperftest\t\n"
    "version\tlibnccl2\t2.28.9-1+cuda13.0\n"
    "end\n"
)


def test_parse_stock_node() -> None:
    found = parse_preflight(STOCK)
    assert found == Found(
        {"ib_write_bw": None, "ethtool": "/usr/sbin/ethtool", AR: None},
        {"ethtool -m enp1s0f1np1": SudoAnswer(False, "sudo: a password is required")},
        {"/run/lldpd.socket": False},
        {"libnccl.so.2": ()},
        {"libnccl2": "2.28.9-1+cuda13.0"},
    )


def test_parse_allowed_sudo_and_found_library_among_noise() -> None:
    found = parse_preflight(
        "Welcome to DGX OS\r\n"
        "sudo\tethtool -m enp1s0f0np0\t0\t/usr/sbin/ethtool -m enp1s0f0np0\n"
        "lib\tlibnccl.so.2\t/usr/lib/*-linux-gnu/libnccl.so.2.* libnccl.so.2 (libc6,AArch64) "
        "=> /usr/local/nccl/lib/libnccl.so.2\nsocket\t/run/lldpd.socket\tyes\nend\n"
    )
    assert found.sudo["ethtool -m enp1s0f0np0"].allowed and found.sockets["/run/lldpd.socket"]
    assert found.libs["libnccl.so.2"] == ("/usr/local/nccl/lib/libnccl.so.2",)


def test_a_script_that_stopped_early_is_a_parse_error_quoting_its_last_line() -> None:
    with pytest.raises(ParseError) as err:
        parse_preflight("tool\tib_write_bw\t/usr/bin/ib_write_bw\ntool\tiperf3\t")
    assert str(err.value) == (
        "preflight: no closing 'end' line: the script stopped early (killed, or the shell "
        "failed); found: 2 lines ending with 'tool\\tiperf3'"
    )


def test_the_script_quotes_every_value_and_expands_only_the_home() -> None:
    look = Lookups(
        tools=("ib_write_bw", AR),
        sudo=(("ethtool", "-m", "enp1s0f1np1"),),
        sockets=("/run/lldpd.socket",),
        libs={"libnccl.so.2": ("/usr/lib/*-linux-gnu/libnccl.so.2.*",)},
        packages=("perftest",),
    )
    assert build_preflight(look).split("\n") == [
        "printf '%s\\t%s\\t%s\\n' tool ib_write_bw \"$(command -v ib_write_bw 2>/dev/null)\"",
        "printf '%s\\t%s\\t%s\\n' tool '~/nccl-tests/build/all_reduce_perf' "
        '"$(command -v ~/nccl-tests/build/all_reduce_perf 2>/dev/null)"',
        "out=$(sudo -n -l ethtool -m enp1s0f1np1 2>&1)",
        "printf '%s\\t%s\\t%s\\t%s\\n' sudo 'ethtool -m enp1s0f1np1' \"$?\" \"$out\"",
        "if [ -S /run/lldpd.socket ]; then s=yes; else s=no; fi; "
        "printf '%s\\t%s\\t%s\\n' socket /run/lldpd.socket \"$s\"",
        "printf '%s\\t%s\\t%s\\n' lib libnccl.so.2 \"$(echo /usr/lib/*-linux-gnu/libnccl.so.2.* "
        '$(ldconfig -p 2>/dev/null | grep -F libnccl.so.2))"',
        "printf '%s\\t%s\\t%s\\n' version perftest "
        "\"$(dpkg-query -W -f '${Version}' perftest 2>/dev/null)\"",
        "echo end",
    ]


NAMES = st.text(st.characters(blacklist_characters="\t\n\r", min_codepoint=33), min_size=1)


@given(
    st.dictionaries(NAMES, st.one_of(st.none(), NAMES.map(lambda s: "/" + s))),
    st.text(st.characters(blacklist_characters="\t")),
)
def test_tool_records_read_back_among_any_noise(tools: dict[str, str | None], noise: str) -> None:
    lines = [f"tool\t{name}\t{path or ''}" for name, path in tools.items()]
    text = noise.replace("end", "") + "\n" + "\n".join(lines) + "\nend\n"
    assert parse_preflight(text).tools == {n: p.strip() if p else None for n, p in tools.items()}


@given(st.text())
def test_the_parser_is_total(text: str) -> None:
    try:
        parse_preflight(text)
    except ParseError as err:
        assert err.tool == "preflight" and "end" in err.missing
    else:
        assert "end" in text
