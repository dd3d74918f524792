"""The read-only RouterOS console commands the suite sends over SSH (`print terse without-paging`,
`monitor <leg> once`, `print stats without-paging where name=...`; RouterOS 7.20.8) and the check
that a command only reads."""

from __future__ import annotations

import re

VERBS = ("print", "monitor", "get")  # the only console verbs sent: none changes the switch

# The same characters cluster.yaml allows for switch.ports (cluster/argrules.py SWITCH_PORT).
_LEG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
_NAME = r'(?:"[A-Za-z0-9._-]+"|[A-Za-z0-9._-]+)'
# The one bracketed command the check lets through, and only as monitor's item.
_FIND = re.compile(r'\[find name="[A-Za-z0-9._-]+"\]')

ETHERNET = "/interface ethernet print terse without-paging"
BRIDGE_PORT = "/interface bridge port print terse without-paging"
# Menu path: MikroTik manual, quality-of-service.md (`/interface/ethernet/switch/qos/port`).
QOS_PORT = "/interface ethernet switch qos port print terse without-paging"
RESOURCE = "/system resource print"


def check_leg_name(name: str) -> str:
    """`name` if it can stand in a command as a switch interface name, else ValueError."""
    if not isinstance(name, str) or not _LEG.match(name):
        raise ValueError(
            f"{name!r} is not a switch interface name the suite sends: use letters, digits, "
            "'.', '_' and '-' only, at most 64, not starting with '.' or '-'"
        )
    return name


def monitor_command(leg: str) -> str:
    """A leg named as the console reads names. A bare number is the item number of the last
    print and `0x10` a hex number (MikroTik manual, Console, "Item Numbers"; Scripting, "Data
    types"), so a leg that does not begin with a letter is selected by `[find name="<leg>"]`,
    as the manual's ssh-exec example does (index id 71155351262). Not tried on a switch."""
    name = check_leg_name(leg)
    item = name if name[:1].isalpha() else f'[find name="{name}"]'
    return f"/interface ethernet monitor {item} once"


def stats_command(leg: str) -> str:
    return f'/interface ethernet print stats without-paging where name="{check_leg_name(leg)}"'


_FLAG_ARGS = {
    "print": {"terse", "without-paging", "detail", "stats", "as-value", "count-only"},
    "monitor": {"once", "without-paging", "as-value"},
    "get": set(),
}
_WHERE = re.compile(rf"^(?:name|interface|default-name)={_NAME}$")
_ITEMS = re.compile(rf"^{_NAME}(?:,{_NAME})*$")


def command_problem(command: str) -> str | None:
    """Why `command` is not one plain read of the switch (None when it is). Refused: `file=`
    (print writes a file), `interval=` and `follow` (never end), `do=` (monitor runs a script),
    any `[...]` but monitor's `[find name="..."]`."""
    bad = sorted({c for c in _FIND.sub("", command) if not re.match(r'[A-Za-z0-9 /._",=-]', c)})
    if bad or not command:
        return f"holds {', '.join(map(repr, bad)) or 'nothing'}: one plain command only"
    if not command.startswith("/"):
        return "does not start with a menu path ('/...')"
    joined = _FIND.sub(lambda m: m[0].replace(" ", "\0"), command)
    if "" in (tokens := [t.replace("\0", " ") for t in joined.split(" ")]):
        return "holds two spaces in a row (or a space at an end)"
    words = [w for w in tokens[0].split("/") if w] + tokens[1:]
    at = next((i for i, w in enumerate(words) if w in VERBS), None)
    if at is None:
        return f"has no verb among {', '.join(VERBS)}"
    path, verb, args = words[:at], words[at], words[at + 1 :]
    if not path or any(not re.fullmatch(r"[a-z][a-z0-9-]*", w) for w in path):
        return f"menu path {'/'.join(path) or '(none)'!r} is not words of a-z, 0-9, '-'"
    if "where" in args:
        args, cond = args[: args.index("where")], args[args.index("where") + 1 :]
        if verb != "print" or not cond:
            return "'where' without a print or a condition"
        if any(p != "or" if i % 2 else not _WHERE.match(p) for i, p in enumerate(cond)):
            return f"condition {' '.join(cond)!r} is not name=... [or name=...]"
        if len(cond) % 2 == 0:
            return f"condition {' '.join(cond)!r} ends with 'or'"
    items = [a for a in args if a not in _FLAG_ARGS[verb]]
    for arg in items:
        named = _ITEMS.match(arg) or (verb == "monitor" and _FIND.fullmatch(arg))
        if verb == "print" or not named:
            return f"argument {arg!r} is not one a read of '{verb}' takes"
    if verb == "monitor" and ("once" not in args or len(items) != 1):
        return "monitor needs one interface (list) and 'once' (without it, it never ends)"
    if verb == "get" and not 1 <= len(items) <= 2:
        return "get needs an item and at most one property"
    return None
