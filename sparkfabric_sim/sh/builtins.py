"""dash builtins the probes use: printf, echo, test/[ (behaviour of dash 0.5.12)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_CONV = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?([diouxXcsb%])")
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    '"': '"',
    "'": "'",
}


def _escapes(text: str, *, stop_at_c: bool = False) -> tuple[str, bool]:
    """Backslash escapes as printf's format (and %b / dash echo) interpret them."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        n = text[i + 1]
        if n in _ESCAPES:
            out.append(_ESCAPES[n])
            i += 2
        elif n == "c" and stop_at_c:
            return "".join(out), True
        elif n in "01234567":
            m = re.match(r"0?([0-7]{1,3})", text[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(1), 8)))
            i += 1 + len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out), False


def _number(arg: str) -> int:
    arg = arg.strip()
    if arg[:1] in "'\"" and len(arg) > 1:
        return ord(arg[1])
    try:
        return int(arg, 0) if arg else 0
    except ValueError:
        m = re.match(r"[-+]?\d+", arg)
        return int(m.group(0)) if m else 0


def printf(args: Sequence[str]) -> tuple[int, str, str]:
    if not args:
        return 2, "", "sh: 1: printf: usage: printf format [arg ...]\n"
    fmt, rest = args[0], list(args[1:])
    out: list[str] = []
    while True:
        used = 0
        pos = 0
        for m in _CONV.finditer(fmt):
            out.append(_escapes(fmt[pos : m.start()])[0])
            pos = m.end()
            flags, width, prec, conv = m.groups()
            if conv == "%":
                out.append("%")
                continue
            if width == "*":
                width = str(_number(rest.pop(0))) if rest else "0"
                used += 1
            if prec == "*":
                prec = str(_number(rest.pop(0))) if rest else "0"
                used += 1
            arg = rest.pop(0) if rest else None
            used += arg is not None
            spec = "%" + flags + (width or "") + (f".{prec}" if prec is not None else "")
            if conv in "diouxX":
                out.append((spec + conv.replace("i", "d").replace("u", "d")) % _number(arg or "0"))
            elif conv == "c":
                out.append((spec + "s") % (arg or "")[:1])
            elif conv == "b":
                out.append((spec + "s") % _escapes(arg or "", stop_at_c=True)[0])
            else:
                out.append((spec + "s") % (arg or ""))
        out.append(_escapes(fmt[pos:])[0])
        if not rest or not used:
            break
    return 0, "".join(out), ""


def echo(args: Sequence[str]) -> tuple[int, str, str]:
    newline = True
    if args and args[0] == "-n":
        newline, args = False, args[1:]
    text, stopped = _escapes(" ".join(args), stop_at_c=True)
    return 0, text + ("\n" if newline and not stopped else ""), ""


FileKind = Callable[[str], str | None]
FileSize = Callable[[str], int]


def test(args: Sequence[str], kind: FileKind, size: FileSize, bracket: bool) -> tuple[int, str]:
    """Exit status (0 true, 1 false, 2 error) and an error message."""
    args = list(args)
    name = "[" if bracket else "test"
    if bracket:
        if not args or args[-1] != "]":
            return 2, f"sh: 1: {name}: missing ]\n"
        args = args[:-1]
    try:
        return (0 if _eval(args, kind, size) else 1), ""
    except ValueError as exc:
        return 2, f"sh: 1: {name}: {exc}\n"


_UNARY = {"-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-z", "-n", "-b", "-c", "-p", "-S"}
_BINARY = {"=", "!=", "-eq", "-ne", "-gt", "-ge", "-lt", "-le"}


def _eval(a: list[str], kind: FileKind, size: FileSize) -> bool:
    if not a:
        return False
    if a[0] == "!" and len(a) > 1:
        return not _eval(a[1:], kind, size)
    if len(a) == 1:
        return a[0] != ""
    if len(a) == 2 and a[0] in _UNARY:
        op, v = a
        if op == "-z":
            return v == ""
        if op == "-n":
            return v != ""
        k = kind(v)
        if op == "-e":
            return k is not None
        if op == "-f":
            return k == "file"
        if op == "-d":
            return k == "dir"
        if op == "-S":
            return k == "socket"
        if op == "-s":
            return k == "file" and size(v) > 0
        if op in ("-r", "-w"):
            return k is not None
        if op == "-x":
            return k == "dir"
        return False
    if len(a) == 3 and a[1] in _BINARY:
        x, op, y = a
        if op == "=":
            return x == y
        if op == "!=":
            return x != y
        try:
            i, j = int(x), int(y)
        except ValueError:
            raise ValueError(f"Illegal number: {x if not x.lstrip('-').isdigit() else y}") from None
        return {
            "-eq": i == j,
            "-ne": i != j,
            "-gt": i > j,
            "-ge": i >= j,
            "-lt": i < j,
            "-le": i <= j,
        }[op]
    raise ValueError(f"{a[0]}: unexpected operator")
