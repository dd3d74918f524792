"""The console commands the suite sends a RouterOS switch over SSH, and the test that a command
only reads.

Every read the REST client makes has its console twin here, in `switch_reads`, with the
counters of each leg; each is built
from fixed words and a leg name checked by `check_leg_name`, never from free text; `routeros`
parses what each returns. Forms chosen on evidence:

- lists (`/interface ethernet`, bridge ports, QoS ports) use `print terse without-paging`: one
  line per item with every property, where a column table is laid out for the terminal's
  width and shows only some columns.
- `monitor <leg> once`, one leg per command as REST asks: the answer is one key: value column
  that names its leg.
- counters use `print stats without-paging where name="<leg>"`: `print stats terse` prints the
  same as `print stats` (measured on RouterOS 7.20.8 for `/interface`, index id 63101946964),
  so one leg keeps the key: value answer to one column.
- `/system resource print` is key: value.

`login_user` adds the console's login options to the SSH user (MikroTik manual, Command Line
Interface, "Login Options": `user+c80w` turns colours off, width 80): `c` colours off, `t`
terminal auto-detection off, so the answer is plain text for the parsers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

ReadName = Literal["ethernet", "monitor", "bridge-port", "qos-port", "resource", "stats"]

VERBS = ("print", "monitor", "get")
"""The only console verbs the suite sends: none of them changes the switch."""

# The same characters cluster.yaml allows for switch.ports (cluster/argrules.py SWITCH_PORT).
_LEG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")

ETHERNET = "/interface ethernet print terse without-paging"
BRIDGE_PORT = "/interface bridge port print terse without-paging"
# Menu path: MikroTik manual, quality-of-service.md (`/interface/ethernet/switch/qos/port`).
QOS_PORT = "/interface ethernet switch qos port print terse without-paging"
RESOURCE = "/system resource print"


@dataclass(frozen=True, slots=True)
class SwitchRead:
    """One console command of a pass over the switch."""

    name: ReadName
    command: str
    leg: str | None = None


def check_leg_name(name: str) -> str:
    """`name` if it can stand in a command as a switch interface name, else ValueError."""
    if not isinstance(name, str) or not _LEG.match(name):
        raise ValueError(
            f"{name!r} is not a switch interface name the suite sends: use letters, digits, "
            "'.', '_' and '-' only, at most 64, not starting with '.' or '-'"
        )
    if name.isdigit():
        # The console reads a bare number as the item's index in the last print.
        raise ValueError(
            f"{name!r} is all digits: RouterOS would take it for an item number; rename the "
            "interface (e.g. qsfp56-dd-1-1)"
        )
    return name


def monitor_command(leg: str) -> str:
    return f"/interface ethernet monitor {check_leg_name(leg)} once"


def stats_command(leg: str) -> str:
    return f'/interface ethernet print stats without-paging where name="{check_leg_name(leg)}"'


def switch_reads(legs: Sequence[str]) -> tuple[SwitchRead, ...]:
    """Every command of one pass over the switch, in the order the REST client reads."""
    for leg in legs:
        check_leg_name(leg)
    return (
        SwitchRead("ethernet", ETHERNET),
        *(SwitchRead("monitor", monitor_command(leg), leg) for leg in legs),
        SwitchRead("bridge-port", BRIDGE_PORT),
        SwitchRead("qos-port", QOS_PORT),
        SwitchRead("resource", RESOURCE),
        *(SwitchRead("stats", stats_command(leg), leg) for leg in legs),
    )


def login_user(user: str) -> str:
    """The SSH login name that turns console colours and terminal detection off."""
    return f"{user}+ct"


# ---------------------------------------------------------------- read-only


_WORD = re.compile(r"^[a-z][a-z0-9-]*$")
_FLAG_ARGS = {
    "print": {"terse", "without-paging", "detail", "stats", "as-value", "count-only"},
    "monitor": {"once", "without-paging", "as-value"},
    "get": set(),
}
_WHERE = re.compile(r'^(?:name|interface|default-name)=(?:"[A-Za-z0-9._-]+"|[A-Za-z0-9._-]+)$')


def command_problem(command: str) -> str | None:
    """Why `command` is not a plain read of the switch, or None when it is one.

    A plain read is one console command: a menu path, a verb among print, monitor (with
    `once`, so that it ends) and get, and only arguments that change what is shown (`terse`,
    `stats`, `where name=...`); no `;`, no `[...]` script, no `file=` (print writes a file
    with it), no `interval=` or `follow` (they never end), no `do=` (monitor runs a script).
    """
    if not command or not re.fullmatch(r'[A-Za-z0-9 /._",=-]+', command):
        bad = sorted({c for c in command if not re.match(r'[A-Za-z0-9 /._",=-]', c)})
        return f"holds {', '.join(map(repr, bad)) or 'nothing'}: one plain command only"
    if not command.startswith("/"):
        return "does not start with a menu path ('/...')"
    tokens = command.split(" ")
    if "" in tokens:
        return "holds two spaces in a row (or a space at an end)"
    words = [w for w in tokens[0].split("/") if w] + tokens[1:]
    verb_at = next((i for i, w in enumerate(words) if w in VERBS), None)
    if verb_at is None:
        return f"has no verb among {', '.join(VERBS)}"
    path, verb, args = words[:verb_at], words[verb_at], words[verb_at + 1 :]
    if not path or any(not _WORD.match(w) for w in path):
        return f"menu path {'/'.join(path) or '(none)'!r} is not words of a-z, 0-9, '-'"
    return _args_problem(verb, args)


def _args_problem(verb: str, args: list[str]) -> str | None:
    items: list[str] = []
    if "where" in args:
        at = args.index("where")
        args, cond = args[:at], args[at + 1 :]
        if verb != "print" or not cond:
            return "'where' without a print or a condition"
        for i, part in enumerate(cond):
            if (i % 2 and part != "or") or (not i % 2 and not _WHERE.match(part)):
                return f"condition {' '.join(cond)!r} is not name=... [or name=...]"
        if len(cond) % 2 == 0:
            return f"condition {' '.join(cond)!r} ends with 'or'"
    for arg in args:
        if arg in _FLAG_ARGS[verb]:
            continue
        if verb in ("monitor", "get") and re.fullmatch(r"[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*", arg):
            items.append(arg)
            continue
        return f"argument {arg!r} is not one a read of '{verb}' takes"
    if verb == "monitor" and ("once" not in args or len(items) != 1):
        return "monitor needs one interface (list) and 'once' (without it, it never ends)"
    if verb == "get" and not 1 <= len(items) <= 2:
        return "get needs an item and at most one property"
    return None


def is_read_only(command: str) -> bool:
    return command_problem(command) is None
