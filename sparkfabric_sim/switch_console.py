"""The simulated switch's RouterOS 7 console, as an SSH session shows it (switch.api ssh).

The same tables as the REST answers (`switch.SimSwitch`), written the way the console writes
them; each layout follows real outputs kept in tests/data/routeros-*/ (PROVENANCE.md there):

- `print terse`: ` 0  R  name=ether1 default-name=ether1 mtu=1500 ...`: the item number right-
  aligned in two columns, one column per flag letter of the menu's legend, then `key=value`
  pairs, booleans as yes/no (ntc-templates interface_print_terse_without-paging2.raw; bridge
  ports: the PowerBox Pro fixture, `hw=no`). Flag-only properties (running, slave, disabled,
  hw-offload, inactive, dynamic) are letters, never pairs.
- key: value (`/system resource print`, `monitor ... once`, `print stats`): keys right-aligned
  two columns past the longest (system-resource-print-ccr2004-7.12.2.txt,
  ntc-monitor-once-ether1-1g-no-sfp.txt), sizes as `3704.1MiB`, `cpu-load: 36%`, counters
  grouped by three with spaces (manual-hapac2-ethernet-print-stats-5col-thousands-spaces.txt).
- a command the console does not know: `bad command name X (line 1 column N)`, an unknown
  item: `no such item` (both printed, exit status 0, as RouterOS answers over SSH).

Every command received is kept in `SimSwitch.console_log`, so a test can list what the suite
sent to the switch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparkfabric_sim.switch import Row, SimSwitch

# Flag letters of each list, in the console's legend order (RouterOS 7 `Flags:` lines).
_ETHERNET_FLAGS = (("X", "disabled"), ("R", "running"), ("S", "slave"))
_BRIDGE_PORT_FLAGS = (("X", "disabled"), ("I", "inactive"), ("D", "dynamic"), ("H", "hw-offload"))
_SIZES = ("free-memory", "total-memory", "free-hdd-space", "total-hdd-space")
_WHERE = re.compile(r'^name="?([A-Za-z0-9._-]+)"?$')


def _yes_no(value: str) -> str:
    return {"true": "yes", "false": "no"}.get(value, value)


def _size(value: str) -> str:
    try:
        n = float(value)
    except ValueError:
        return value
    # MiB even past a GiB: `total-memory: 4032.0MiB` (system-resource-print-ccr2004-7.12.2.txt).
    for unit, factor in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:.1f}{unit}"
    return f"{n:.0f}"


def grouped(value: str) -> str:
    """A counter as the console prints it: `182334805898` -> `182 334 805 898`."""
    if not value.isdigit():
        return value
    head = len(value) % 3 or 3
    return " ".join([value[:head]] + [value[i : i + 3] for i in range(head, len(value), 3)])


def terse(rows: Sequence[Row], flags: Sequence[tuple[str, str]]) -> str:
    flag_keys = {key for _, key in flags}
    lines = []
    for i, row in enumerate(rows):
        letters = "".join(letter if row.get(key) == "true" else " " for letter, key in flags)
        pairs = " ".join(
            f"{k}={_yes_no(v)}"
            for k, v in row.items()
            if not k.startswith(".") and k not in flag_keys
        )
        lines.append(f"{i:>2} {letters} {pairs}")
    return "\n".join(lines) + "\n"


def key_value(rows: Sequence[Mapping[str, str]]) -> str:
    """One item's `key: value` lines, or several items side by side (one column each)."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys and not k.startswith(".")]
    width = max((len(k) for k in keys), default=0) + 2
    cols = [max(len(row.get(k, "")) for k in keys) for row in rows]
    lines = []
    for k in keys:
        cells = []
        for row, w in zip(rows, cols, strict=True):
            v = row.get(k, "")
            cells.append(v.rjust(w) if v.replace(" ", "").isdigit() else v.ljust(w))
        lines.append(f"{k:>{width}}: {' '.join(cells).rstrip()}")
    return "\n".join(lines) + "\n"


class SimSwitchConsole:
    """The simulated switch's console: a command line in, RouterOS's text out."""

    def __init__(self, switch: SimSwitch) -> None:
        self._switch = switch

    def run(self, command: str) -> str:
        self._switch.console_log.append(command)
        words = command.split()
        verbs = [i for i, w in enumerate(words) if w in ("print", "monitor", "get")]
        if not words or not words[0].startswith("/") or not verbs:
            return _bad(command, words[-1] if words else "")
        at = verbs[0]
        path = "/".join(w.strip("/") for w in words[:at] if w.strip("/"))
        verb, args = words[at], words[at + 1 :]
        handler = _MENUS.get((path, verb))
        if handler is None:
            return _bad(command, words[at])
        return handler(self._switch, args)


def _bad(command: str, word: str) -> str:
    column = command.find(word) + 1 if word else 1
    return f"bad command name {word} (line 1 column {column})\n"


def _flags(args: Sequence[str]) -> tuple[set[str], list[str]]:
    if "where" in args:
        at = list(args).index("where")
        return set(args[:at]), list(args[at + 1 :])
    return set(args), []


def _print_list(
    table: Callable[[SimSwitch], list[Row]], flags: Sequence[tuple[str, str]]
) -> Callable[[SimSwitch, Sequence[str]], str]:
    def answer(switch: SimSwitch, args: Sequence[str]) -> str:
        words, where = _flags(args)
        if "terse" not in words or where:
            return "syntax error (the simulated console prints lists terse only)\n"
        return terse(table(switch), flags)

    return answer


def _ethernet_print(switch: SimSwitch, args: Sequence[str]) -> str:
    words, where = _flags(args)
    if "stats" not in words:
        return _print_list(lambda s: s.ethernet(), _ETHERNET_FLAGS)(switch, args)
    names = [m.group(1) for w in where if (m := _WHERE.match(w))]
    rows = [r for r in switch.stats() if not names or r["name"] in names]
    if not rows:
        return ""
    shown = [
        {k: (v if k == "name" else grouped(v)) for k, v in r.items() if not k.startswith(".")}
        for r in rows
    ]
    return key_value(shown)


def _monitor(switch: SimSwitch, args: Sequence[str]) -> str:
    items = [a for a in args if a not in ("once", "without-paging")]
    if "once" not in args or len(items) != 1:
        return "syntax error (line 1 column 27)\n"
    names = items[0].split(",")
    if any(n not in switch.config.interfaces() for n in names):
        return "no such item\n"
    rows = [{k: _yes_no(v) for k, v in r.items()} for r in switch.monitor(names)]
    return key_value(rows)


def _resource(switch: SimSwitch, args: Sequence[str]) -> str:
    row = dict(switch.resource())
    for key in _SIZES:
        if key in row:
            row[key] = _size(row[key])
    row["cpu-load"] = f"{row['cpu-load']}%"
    if "cpu-frequency" in row:
        row["cpu-frequency"] = f"{row['cpu-frequency']}MHz"
    return key_value([row])


_MENUS: Mapping[tuple[str, str], Callable[[SimSwitch, Sequence[str]], str]] = {
    ("interface/ethernet", "print"): _ethernet_print,
    ("interface/ethernet", "monitor"): _monitor,
    ("interface/bridge/port", "print"): _print_list(lambda s: s.bridge_ports(), _BRIDGE_PORT_FLAGS),
    ("interface/ethernet/switch/qos/port", "print"): _print_list(lambda s: s.qos_ports(), ()),
    ("system/resource", "print"): _resource,
}
