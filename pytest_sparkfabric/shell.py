"""Shell text built in one place, every value one quoted word (unquoted text comes only from
this package's constant scripts and the operator's cluster.yaml templates, filled by `fill`;
`~/` and `*` stay unquoted on purpose); and text for the terminal (`visible`, `duration`)."""

from __future__ import annotations

import shlex
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, NewType

Command = NewType("Command", str)
"""Shell text built by this module."""


@dataclass(frozen=True, slots=True)
class Words:
    """Shell words already rendered by this module; put in as they are."""

    text: str


Arg = str | int | Words


def quote(value: str | int) -> str:
    """One shell word that the node's shell reads back as exactly `value`."""
    return shlex.quote(str(value))


def _word(arg: Arg) -> str:
    return arg.text if isinstance(arg, Words) else quote(arg)


def join(argv: Iterable[Arg]) -> Command:
    """The command line that runs `argv` as it is: one word per element."""
    if not (text := words(argv).text):
        raise ValueError("an empty command")
    return Command(text)


def then(commands: Iterable[Command]) -> Command:
    """Commands run one after the other (`a; b`), whatever each one's status."""
    return Command("; ".join(commands))


def home_path(path: str) -> Words:
    """A path that may start with `~/` (the login user's home, expanded by the node's shell)."""
    rest = path.removeprefix("~/")
    return Words(quote(path) if rest == path else "~/" + quote(rest) if rest else "~/")


def glob(pattern: str) -> Words:
    """A path pattern whose `*` expands on the node; everything else in it is literal."""
    return Words("*".join(quote(part) if part else "" for part in pattern.split("*")))


def words(items: Iterable[Arg]) -> Words:
    """Several words in a row, e.g. the list a `for` loop runs over."""
    return Words(" ".join(_word(a) for a in items))


def fill(template: str, values: Mapping[str, Arg]) -> Command:
    """`template` (shell text) with each `{name}` replaced by `values[name]` as quoted words
    (`{{`, `}}`: literal braces); no format spec, conversion, index or attribute (`holes` and
    cluster.yaml's validation reject those first)."""
    out: list[str] = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if spec or conversion or name not in values:
            raise ValueError(f"template placeholder {{{name}}} cannot be filled in: {template!r}")
        out.append(_word(values[name]))
    return Command("".join(out))


Context = Literal["word", "single-quoted", "double-quoted", "escaped", "comment"]


@dataclass(frozen=True, slots=True)
class Hole:
    """One placeholder of a template: its name, where it stands, and whether it takes a format
    spec, conversion, index or attribute (which `fill` does not do)."""

    name: str
    context: Context
    plain: bool


def program(template: str) -> str | None:
    """The program a cluster.yaml command template starts (None: unreadable, or a placeholder
    starts it)."""
    try:
        words = shlex.split(template)
    except ValueError:
        return None
    return words[0] if words and "{" not in words[0] else None


_QUOTED: dict[str, Context] = {"'": "single-quoted", '"': "double-quoted"}


def holes(template: str) -> list[Hole]:
    """Every placeholder of a shell template with the quoting context it stands in.

    Only a placeholder in `word` context can be filled with a quoted word: inside quotes,
    after a backslash or in a comment, the quotes `fill` adds would be read differently
    (POSIX sh, XCU 2.2 Quoting and 2.3 Token Recognition). Raises ValueError on a template
    string.Formatter cannot read."""
    state: Context = "word"
    at_word_start = True
    out: list[Hole] = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        escaped = False
        for c in literal:
            if escaped:
                escaped, at_word_start = False, False
            elif state == "comment" and c == "\n":
                state, at_word_start = "word", True
            elif state == "single-quoted" and c == "'":
                state = "word"
            elif state == "double-quoted":
                escaped, state = c == "\\", "word" if c == '"' else state
            elif state in ("comment", "single-quoted"):
                pass
            elif c == "\\":
                escaped = True
            elif c in _QUOTED:
                state, at_word_start = _QUOTED[c], False
            elif c == "#" and at_word_start:
                state = "comment"
            else:
                at_word_start = c in " \t\n;&|()<>"
        if name is None:
            continue
        context: Context = "escaped" if escaped else state
        base = name.split(".")[0].split("[")[0]
        out.append(Hole(base, context, plain=name == base and not spec and not conversion))
        at_word_start = False
    return out


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (9, 10)}
"""Every C0 and C1 control but tab and newline, and DEL, as its escape (`\\x1b`)."""


def visible(text: str) -> str:
    """Text from a node, the switch or cluster.yaml as it may reach a terminal: control
    characters (ANSI escapes, title-setting sequences, NUL, a carriage return that would
    overwrite the line) shown as escapes, never obeyed."""
    return text.translate(_CONTROL)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def duration(seconds: float | None) -> str:
    """The one duration form of every line a person reads: 0.4 s, 38 s, 1 min 12 s, 15 min,
    1 h 02 min."""
    if seconds is None:
        return "unknown"
    if seconds < 10:
        return f"{seconds:.1f}".removesuffix(".0") + " s"
    h, rest = divmod(round(seconds), 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h} h {m:02d} min"
    if m:
        return f"{m} min {s:02d} s" if s else f"{m} min"
    return f"{s} s"
