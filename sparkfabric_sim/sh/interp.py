"""Runs a parsed script: expansion, redirections, control flow, builtins; other commands go
to the host (the simulated node). Time adds up command by command."""

from __future__ import annotations

import glob as _glob
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from sparkfabric_sim.outcome import Outcome
from sparkfabric_sim.sh import builtins
from sparkfabric_sim.sh.grammar import parse_script
from sparkfabric_sim.sh.parse import (
    AndOr,
    For,
    Group,
    If,
    Node,
    Part,
    Pipeline,
    Redirect,
    Sequence,
    ShellSyntaxError,
    Simple,
    While,
    Word,
)

MAX_LOOPS = 10_000

# The read loop of pytest_sparkfabric/probes/sysfs.py (build_read_files, globs expanded or not): a
# thousand files per node per counter read. `_read_files` runs it without interpreting its body
# file by file; what it prints, its time and a hang are those of the interpreted loop.
_READ_LOOP = (
    parse_script(
        'for f in x; do if v=$(cat -- "$f" 2>/dev/null); then '
        'printf \'SFREAD\\tok\\t%s\\t%s\\n\' "$f" "$v"; else '
        "printf 'SFREAD\\tmissing\\t%s\\n' \"$f\"; fi; done"
    )
    .items[0]
    .first.commands[0]
)


class Host(Protocol):
    def run(self, argv: list[str], env: Mapping[str, str], stdin: str, at: float) -> Outcome: ...

    def glob(self, pattern: str) -> list[str]: ...

    def which(self, name: str) -> str | None: ...

    def kind(self, path: str) -> str | None: ...

    def read(self, path: str) -> str: ...


class _Hang(Exception):
    pass


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@dataclass
class _Io:
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


class Interp:
    def __init__(self, host: Host, env: Mapping[str, str], start: float = 0.0) -> None:
        self.host = host
        self.vars = dict(env)
        self.exported = set(env)
        self.start = start
        self.elapsed = 0.0
        self.status = 0
        self._sub_status: int | None = None
        # (start offset, outcome) of every program run, for the timeline of a killed script.
        self._runs: list[tuple[float, Outcome]] = []

    def run_script(self, text: str, stdin: str = "") -> Outcome:
        start = self.elapsed
        try:
            seq = parse_script(text)
        except ShellSyntaxError as exc:
            return Outcome(2, "", f"sh: 1: {exc}\n")
        io = _Io()
        try:
            rc = self.sequence(seq, stdin, io)
        except _Exit as exc:
            rc = exc.code
        except _Hang:
            out = "".join(io.out)
            return Outcome(124, out, "".join(io.err), self.elapsed - start, out, hang=True)
        out = "".join(io.out)
        return Outcome(
            rc, out, "".join(io.err), self.elapsed - start, timeline=self._timeline(out, start)
        )

    def _timeline(self, out: str, start: float) -> tuple[tuple[float, str], ...]:
        """A script of one program that prints as it goes, its output on stdout: that timeline,
        after whatever the script printed before it (other scripts keep no timeline)."""
        if len(self._runs) != 1:
            return ()
        at, outcome = self._runs[0]
        if not outcome.timeline or not out.endswith(outcome.stdout):
            return ()
        prefix = out[: len(out) - len(outcome.stdout)]
        return tuple((at - start + t, prefix + text) for t, text in outcome.timeline)

    # -- control flow -------------------------------------------------------------------------

    def sequence(self, seq: Sequence, stdin: str, io: _Io) -> int:
        for item in seq.items:
            self.status = self.and_or(item, stdin, io)
        return self.status

    def and_or(self, node: AndOr, stdin: str, io: _Io) -> int:
        rc = self.pipeline(node.first, stdin, io)
        for op, pipe in node.rest:
            if (op == "&&" and rc == 0) or (op == "||" and rc != 0):
                rc = self.pipeline(pipe, stdin, io)
        return rc

    def pipeline(self, node: Pipeline, stdin: str, io: _Io) -> int:
        data = stdin
        rc = 0
        for i, cmd in enumerate(node.commands):
            last = i == len(node.commands) - 1
            sub = io if last else _Io(err=io.err)
            rc = self.command(cmd, data, sub)
            data = "".join(sub.out)
        self.status = (0 if rc else 1) if node.negate else rc
        return self.status

    def command(self, node: Node, stdin: str, io: _Io) -> int:
        if isinstance(node, Simple):
            return self.simple(node, stdin, io)
        if isinstance(node, For):
            words = [x for w in node.words for x in self.expand(w)]
            if _is_read_loop(node) and not {"f", "v"} & self.exported:
                return self._read_files(words, io)
            rc = 0
            for value in words:
                self.vars[node.var] = value
                rc = self.sequence(node.body, stdin, io)
            return rc
        if isinstance(node, If):
            for cond, body in node.clauses:
                if self.sequence(cond, stdin, io) == 0:
                    return self.sequence(body, stdin, io)
            return self.sequence(node.otherwise, stdin, io) if node.otherwise else 0
        if isinstance(node, While):
            rc = 0
            for _ in range(MAX_LOOPS):
                if self.sequence(node.condition, stdin, io) != 0:
                    break
                rc = self.sequence(node.body, stdin, io)
            return rc
        assert isinstance(node, Group)
        inner = _Io()
        rc = self.sequence(node.body, stdin, inner)
        return self._deliver(inner, node.redirects, io, rc)

    def _read_files(self, paths: list[str], io: _Io) -> int:
        """`_READ_LOOP` over `paths`: each file's `cat` run as the loop runs it, each record
        printed by the loop's own printf format."""
        ok, missing = _READ_FORMATS
        env = {k: v for k, v in self.vars.items() if k in self.exported}
        rc = 0
        for path in paths:
            self.vars["f"] = path
            outcome = self.host.run(["cat", "--", path], env, "", self.start + self.elapsed)
            self.elapsed += outcome.duration_s
            if outcome.hang:
                raise _Hang
            self.vars["v"] = value = outcome.stdout.rstrip("\n")
            rc, out, err = builtins.printf(
                [ok, path, value] if outcome.rc == 0 else [missing, path]
            )
            io.out.append(out)
            io.err.append(err)
            self.status, self._sub_status = rc, None
        return rc

    # -- simple commands ----------------------------------------------------------------------

    def simple(self, node: Simple, stdin: str, io: _Io) -> int:
        self._sub_status = None
        argv = [x for w in node.words for x in self.expand(w)]
        values = [(name, "".join(self.expand(w, split=False))) for name, w in node.assignments]
        if not argv:
            self.vars.update(values)
            rc = self._sub_status if self._sub_status is not None else 0
            return self._deliver(_Io(), node.redirects, io, rc)
        for r in node.redirects:
            if r.op == "<":
                target = "".join(self.expand(r.target, split=False))
                try:
                    stdin = self.host.read(target)
                except OSError as exc:
                    io.err.append(f"sh: 1: cannot open {target}: {exc}\n")
                    return 2
        env = {k: v for k, v in self.vars.items() if k in self.exported}
        env.update(values)
        inner = _Io()
        try:
            rc = self.run_argv(argv, env, stdin, inner)
        except _Hang:
            self._deliver(inner, node.redirects, io, 124)
            raise
        return self._deliver(inner, node.redirects, io, rc)

    def run_argv(self, argv: list[str], env: Mapping[str, str], stdin: str, io: _Io) -> int:
        name, args = argv[0], argv[1:]
        if name == "command" and args and args[0] not in ("-v", "-V"):
            return self.run_argv(args, env, stdin, io)
        builtin = _BUILTINS.get(name)
        if builtin is not None:
            rc, out, err = builtin(self, args)
        else:
            outcome = self.host.run(argv, env, stdin, self.start + self.elapsed)
            self._runs.append((self.elapsed, outcome))
            self.elapsed += outcome.duration_s
            if outcome.hang:
                io.out.append(outcome.partial)
                raise _Hang
            rc, out, err = outcome.rc, outcome.stdout, outcome.stderr
        io.out.append(out)
        io.err.append(err)
        return rc

    def _deliver(self, inner: _Io, redirects: tuple[Redirect, ...], io: _Io, rc: int) -> int:
        sinks: dict[int, list[str] | None] = {1: io.out, 2: io.err}
        for r in redirects:
            if r.op == "<":
                continue
            target = "".join(self.expand(r.target, split=False))
            if r.op == ">&":
                sinks[r.fd] = sinks.get(int(target), io.out) if target.isdigit() else None
            else:
                # Only /dev/null is writable here; anything else is accepted and dropped.
                sinks[r.fd] = None
        for fd, data in ((1, inner.out), (2, inner.err)):
            sink = sinks.get(fd)
            if sink is not None:
                sink.extend(data)
        return rc

    # -- expansion ----------------------------------------------------------------------------

    def lookup(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "4242"
        if name == "#":
            return "0"
        if name == "0":
            return "sh"
        return self.vars.get(name, "")

    def substitute(self, script: str) -> str:
        child = Interp(self.host, {}, start=self.start + self.elapsed)
        child.vars = dict(self.vars)
        child.exported = set(self.exported)
        outcome = child.run_script(script)
        self.elapsed += child.elapsed
        if outcome.hang:
            raise _Hang
        self._sub_status = outcome.rc
        return outcome.stdout.rstrip("\n")

    def expand(self, word: Word, split: bool = True) -> list[str]:
        if word.static is not None:
            return list(word.static)
        fields: list[list[tuple[str, bool]]] = [[]]
        touched = [False]
        parts = list(word.parts)
        head = parts[0] if parts else None
        if head is not None and head.kind == "lit" and not head.quoted and head.text[:1] == "~":
            user, sep, rest = head.text[1:].partition("/")
            if not user:
                fields[0].append((self.vars.get("HOME", "/root"), True))
                touched[0] = True
                parts[0] = Part("lit", sep + rest, False)
        for part in parts:
            if part.kind == "lit":
                fields[-1].append((part.text, part.quoted))
                touched[-1] = touched[-1] or part.quoted or bool(part.text)
                continue
            value = self.lookup(part.text) if part.kind == "param" else self.substitute(part.text)
            if part.quoted or not split:
                fields[-1].append((value, True))
                touched[-1] = True
                continue
            pieces = value.split()
            if value[:1].isspace() and fields[-1]:
                fields.append([])
                touched.append(False)
            for i, piece in enumerate(pieces):
                if i:
                    fields.append([])
                    touched.append(False)
                fields[-1].append((piece, False))
                touched[-1] = True
            if value[-1:].isspace() and pieces:
                fields.append([])
                touched.append(False)
        out: list[str] = []
        for segs, used in zip(fields, touched, strict=True):
            if not used:
                continue
            text = "".join(s for s, _ in segs)
            if split and any(not q and any(c in s for c in "*?[") for s, q in segs):
                pattern = "".join(s if not q else _glob.escape(s) for s, q in segs)
                matches = self.host.glob(pattern)
                out.extend(matches if matches else [text])
            else:
                out.append(text)
        return out


def _b_printf(sh: Interp, args: list[str]) -> tuple[int, str, str]:
    return builtins.printf(args)


def _b_echo(sh: Interp, args: list[str]) -> tuple[int, str, str]:
    return builtins.echo(args)


def _b_test(bracket: bool) -> Callable[[Interp, list[str]], tuple[int, str, str]]:
    def run(sh: Interp, args: list[str]) -> tuple[int, str, str]:
        def size(path: str) -> int:
            try:
                return len(sh.host.read(path))
            except OSError:
                return 0

        rc, err = builtins.test(args, sh.host.kind, size, bracket)
        return rc, "", err

    return run


def _b_export(sh: Interp, args: list[str]) -> tuple[int, str, str]:
    for arg in args:
        name, eq, value = arg.partition("=")
        if eq:
            sh.vars[name] = value
        sh.exported.add(name)
    return 0, "", ""


def _b_unset(sh: Interp, args: list[str]) -> tuple[int, str, str]:
    for name in args:
        sh.vars.pop(name, None)
        sh.exported.discard(name)
    return 0, "", ""


def _b_exit(sh: Interp, args: list[str]) -> tuple[int, str, str]:
    raise _Exit(int(args[0]) if args and args[0].isdigit() else sh.status)


def _b_command(sh: Interp, args: list[str]) -> tuple[int, str, str]:
    names = [a for a in args if not a.startswith("-")]
    out, rc = "", 0
    for name in names:
        path = name if name in _BUILTINS or name == "command" else sh.host.which(name)
        if path is None:
            rc = 127
        else:
            out += path + "\n"
    return rc, out, ""


_BUILTINS: dict[str, Callable[[Interp, list[str]], tuple[int, str, str]]] = {
    "printf": _b_printf,
    "echo": _b_echo,
    "test": _b_test(bracket=False),
    "[": _b_test(bracket=True),
    "true": lambda sh, args: (0, "", ""),
    ":": lambda sh, args: (0, "", ""),
    "false": lambda sh, args: (1, "", ""),
    "export": _b_export,
    "unset": _b_unset,
    "exit": _b_exit,
    "cd": lambda sh, args: (0, "", ""),
    "command": _b_command,
}


def _is_read_loop(node: Node) -> bool:
    assert isinstance(_READ_LOOP, For)
    return isinstance(node, For) and node.var == _READ_LOOP.var and node.body == _READ_LOOP.body


def _read_formats() -> tuple[str, str]:
    """The ok and missing printf formats of `_READ_LOOP`, as its words give them."""
    assert isinstance(_READ_LOOP, For)
    branch = _READ_LOOP.body.items[0].first.commands[0]
    assert isinstance(branch, If) and branch.otherwise is not None
    formats = []
    for seq in (branch.clauses[0][1], branch.otherwise):
        printf = seq.items[0].first.commands[0]
        assert isinstance(printf, Simple) and printf.words[1].static is not None
        formats.append(printf.words[1].static[0])
    return formats[0], formats[1]


_READ_FORMATS = _read_formats()
