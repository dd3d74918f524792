"""coreutils/procps/iproute2-ss/grep-style tools: uname, cat, grep, sysctl, ss, sleep, kill..."""

from __future__ import annotations

import functools
import re

from sparkfabric_sim.hardware import ARCH, KERNEL_RELEASE
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.processes import end_process
from sparkfabric_sim.render import misc
from sparkfabric_sim.render.iperf3 import BUILD
from sparkfabric_sim.sh import builtins
from sparkfabric_sim.tools.args import ArgError, Parser, duration_s
from sparkfabric_sim.vfs import VfsError
from sparkfabric_sim.world import Ctx, NodeHost


def uname(ctx: Ctx, argv: list[str]) -> Outcome:
    values = {"s": "Linux", "n": ctx.node.name, "r": KERNEL_RELEASE, "m": ARCH, "o": "GNU/Linux"}
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    if "a" in flags:
        return ok(
            f"Linux {ctx.node.name} {KERNEL_RELEASE} {BUILD} {ARCH} {ARCH} {ARCH} GNU/Linux\n"
        )
    chosen = [values[c] for c in "snrmo" if c in flags] or [values["s"]]
    return ok(" ".join(chosen) + "\n")


def hostname(ctx: Ctx, argv: list[str]) -> Outcome:
    if "-I" in argv:
        addresses = [str(ctx.node.mgmt.address.ip)]
        addresses += [str(d.address.ip) for d in ctx.node.netdevs if d.address is not None]
        return ok(" ".join(addresses) + " \n")
    return ok(ctx.node.name + "\n")


def printenv(ctx: Ctx, argv: list[str]) -> Outcome:
    if len(argv) == 1:
        return ok("".join(f"{k}={v}\n" for k, v in ctx.env.items()))
    values = [ctx.env[name] for name in argv[1:] if name in ctx.env]
    return Outcome(0 if len(values) == len(argv) - 1 else 1, "".join(v + "\n" for v in values))


def sleep(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        seconds = sum(duration_s(a) for a in argv[1:])
    except ValueError as exc:
        return fail(1, f"sleep: {exc}\n")
    if len(argv) < 2:
        return fail(1, "sleep: missing operand\nTry 'sleep --help' for more information.\n")
    return Outcome(0, duration_s=seconds)


def cat(ctx: Ctx, argv: list[str]) -> Outcome:
    paths = [a for a in argv[1:] if a != "--"]
    if not paths:
        return ok(ctx.stdin)
    out, err, rc = [], [], 0
    for path in paths:
        try:
            out.append(ctx.vfs().read(path))
        except VfsError as exc:
            err.append(f"cat: {path}: {exc.reason}\n")
            rc = 1
    return Outcome(rc, "".join(out), "".join(err))


@functools.cache  # built once: parse_args leaves a parser unchanged
def _grep_parser() -> Parser:
    p = Parser("grep")
    for flag in ("-H", "-h", "-s", "-q", "-v", "-i", "-E", "-F", "-c", "-r", "-x", "-w"):
        p.add_argument(flag, action="store_true", dest=flag[1:])
    p.add_argument("-e", dest="patterns", action="append")
    p.add_argument("rest", nargs="*")
    return p


def grep(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _grep_parser().parse_intermixed_args(argv[1:])
    except ArgError as exc:
        return fail(2, f"grep: {exc.message}\nUsage: grep [OPTION]... PATTERNS [FILE]...\n")
    rest = list(a.rest)
    patterns = a.patterns or ([rest.pop(0)] if rest else None)
    if not patterns:
        return fail(2, "Usage: grep [OPTION]... PATTERNS [FILE]...\n")
    flags = re.IGNORECASE if a.i else 0
    exprs = [re.compile(re.escape(p) if a.F else _bre(p, a.E), flags) for p in patterns]
    sources: list[tuple[str | None, str | VfsError]] = []
    for path in rest or [None]:
        if path is None:
            sources.append((None, ctx.stdin))
            continue
        try:
            sources.append((path, ctx.vfs().read(path)))
        except VfsError as exc:
            sources.append((path, exc))
    with_name = (len(rest) > 1 or a.H) and not a.h
    out, err, matched, errors = [], [], False, False
    for name, content in sources:
        if isinstance(content, VfsError):
            errors = True
            if not a.s:
                err.append(f"grep: {name}: {content.reason}\n")
            continue
        count = 0
        for line in content.splitlines():
            hit = any((e.fullmatch(line) if a.x else e.search(line)) for e in exprs)
            if hit != a.v:
                count += 1
                if not (a.q or a.c):
                    out.append(f"{name}:{line}\n" if with_name else f"{line}\n")
        if a.c:
            out.append(f"{name}:{count}\n" if with_name else f"{count}\n")
        matched = matched or count > 0
    if a.q and matched:
        return Outcome(0, "", "".join(err))
    rc = 2 if errors else (0 if matched else 1)
    return Outcome(rc, "".join(out) if not a.q else "", "".join(err))


def _bre(pattern: str, extended: bool) -> str:
    if extended:
        return pattern
    # Basic regex: \( \) \{ \} \| are the operators; bare ( ) { } | + ? are literals.
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "(){}|+?":
            out.append(pattern[i + 1])
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    return "".join(out)


def sysctl(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    names_only = "-n" in args
    keys = [a for a in args if not a.startswith("-")]
    if "-w" in args or any("=" in k for k in keys):
        key = keys[0].split("=", 1)[0] if keys else ""
        return fail(255, f'sysctl: setting key "{key}": Read-only file system\n')
    out, err, rc = [], [], 0
    for key in keys:
        path = "/proc/sys/" + key.replace(".", "/") if not key.startswith("/") else key
        try:
            value = ctx.vfs().read(path).rstrip("\n")
        except VfsError:
            err.append(f"sysctl: cannot stat {path}: No such file or directory\n")
            rc = 255
            continue
        out.append(value + "\n" if names_only else f"{key} = {value}\n")
    return Outcome(rc, "".join(out), "".join(err))


def _short_flags(argv: list[str]) -> str:
    return "".join(a[1:] for a in argv if a.startswith("-") and not a.startswith("--"))


def ss(ctx: Ctx, argv: list[str]) -> Outcome:
    expr = " ".join(a for a in argv[1:] if not a.startswith("-"))
    m = re.search(r"sport\s*(?:=|==|eq)\s*:(\d+)", expr)
    wanted = int(m.group(1)) if m else None
    rows = []
    for p in sorted(ctx.rt.procs.values(), key=lambda p: p.pid):
        if p.node != ctx.node.name or p.port is None or p.finished:
            continue
        if p.kind not in ("perftest-server", "iperf3-server") or not p.start <= ctx.t < p.end:
            continue
        if wanted is None or p.port == wanted:
            rows.append(misc.ss_listen(p.port, "0.0.0.0" if p.kind == "perftest-server" else "*"))
    header = "State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess\n"
    return ok(("" if "H" in _short_flags(argv[1:]) else header) + "".join(rows))


def kill(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    if args[:1] == ["-s"]:
        args = args[2:]
    elif len(args) > 1 and args[0].startswith("-") and args[0] != "--":
        args = args[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    rc, err = 0, []
    for target in args:
        proc = ctx.rt.procs.get(abs(int(target))) if target.lstrip("-").isdigit() else None
        if proc is None or proc.finished or proc.node != ctx.node.name:
            err.append("sh: 1: kill: No such process\n")
            rc = 1
        elif ctx.changes():
            end_process(ctx.rt, proc, ctx.t)
    return Outcome(rc, "", "".join(err))


def which(ctx: Ctx, argv: list[str]) -> Outcome:
    # The shell's own lookup (`command -v`): a tool the node lacks is not found by either.
    out = [p for a in argv[1:] if (p := NodeHost(ctx).which(a)) is not None]
    return Outcome(0 if len(out) == len(argv) - 1 else 1, "".join(p + "\n" for p in out))


def test(ctx: Ctx, argv: list[str]) -> Outcome:
    def size(path: str) -> int:
        try:
            return len(ctx.vfs().read(path))
        except VfsError:
            return 0

    rc, err = builtins.test(argv[1:], ctx.vfs().kind, size, argv[0].endswith("["))
    return Outcome(rc, "", err)


def ibdev2netdev(ctx: Ctx, argv: list[str]) -> Outcome:
    order = sorted(ctx.node.netdevs, key=lambda d: (d.rail, d.port))
    rows = [(d.rdma, d.name, ctx.rt.carrier(d, ctx.t)) for d in order]
    return ok(misc.ibdev2netdev(rows))


def _lines_arg(argv: list[str], default: int = 10) -> tuple[int, list[str]]:
    count, files, args = default, [], argv[1:]
    while args:
        a = args.pop(0)
        if a == "-n" and args:
            count = int(args.pop(0))
        elif a.startswith("-n"):
            count = int(a[2:])
        elif a.startswith("-") and a[1:].isdigit():
            count = int(a[1:])
        else:
            files.append(a)
    return count, files


def _input(ctx: Ctx, files: list[str], tool: str) -> tuple[str, str, int]:
    if not files:
        return ctx.stdin, "", 0
    try:
        return "".join(ctx.vfs().read(f) for f in files), "", 0
    except VfsError as exc:
        return "", f"{tool}: cannot open '{files[0]}' for reading: {exc.reason}\n", 1


def head(ctx: Ctx, argv: list[str]) -> Outcome:
    count, files = _lines_arg(argv)
    text, err, rc = _input(ctx, files, "head")
    return Outcome(rc, "".join(text.splitlines(keepends=True)[:count]), err)


def tail(ctx: Ctx, argv: list[str]) -> Outcome:
    count, files = _lines_arg(argv)
    text, err, rc = _input(ctx, files, "tail")
    lines = text.splitlines(keepends=True)
    return Outcome(rc, "".join(lines[-count:] if count else []), err)


def wc(ctx: Ctx, argv: list[str]) -> Outcome:
    files = [a for a in argv[1:] if not a.startswith("-")]
    text, err, rc = _input(ctx, files, "wc")
    return Outcome(rc, f"{text.count(chr(10))}\n" if "-l" in argv else f"{len(text)}\n", err)


TOOLS = {
    "head": head,
    "tail": tail,
    "wc": wc,
    "uname": uname,
    "hostname": hostname,
    "printenv": printenv,
    "sleep": sleep,
    "cat": cat,
    "grep": grep,
    "sysctl": sysctl,
    "ss": ss,
    "kill": kill,
    "which": which,
    "test": test,
    "[": test,
    "true": lambda ctx, argv: ok(),
    "false": lambda ctx, argv: Outcome(1),
    "ibdev2netdev": ibdev2netdev,
}
