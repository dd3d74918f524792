"""Programs that run other programs: sudo, timeout, env, sh -c."""

from __future__ import annotations

from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.tools.args import duration_s
from sparkfabric_sim.world import Ctx, NodeHost

TIMEOUT_RC = 124


def _dispatch(ctx: Ctx, argv: list[str]) -> Outcome:
    from sparkfabric_sim.tools import dispatch

    return dispatch(ctx, argv)


def sudo(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    non_interactive = listing = False
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag == "--":
            break
        non_interactive = non_interactive or flag == "-n"
        listing = listing or flag == "-l"
        if flag in ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"):
            args = args[1:]
    if not args:
        return fail(1, "usage: sudo -h | -K | -k | -V\n")
    if ctx.node.sudo_asks:
        # sudo(8) -n: "If a password is required for the command to run, sudo will display an
        # error message and exit" (status 1; sudoers' message); without -n and no terminal it
        # says it needs one (sudo's tgetpass.c).
        if non_interactive:
            return fail(1, "sudo: a password is required\n")
        return fail(
            1,
            "sudo: a terminal is required to read the password; either use the -S "
            "option to read from standard input or configure an askpass helper\n",
        )
    if listing:
        # sudo(8) -l with a command: "If a command is specified and is permitted by the
        # security policy, the fully-qualified path to the command is displayed along with any
        # command line arguments"; it is not run.
        path = NodeHost(ctx).which(args[0])
        if path is None:
            return fail(1, f"sudo: {args[0]}: command not found\n")
        return Outcome(0, " ".join([path, *args[1:]]) + "\n")
    env = {**ctx.env, "USER": "root", "HOME": "/root", "LOGNAME": "root"}
    return _dispatch(ctx.at(ctx.t, env, ctx.stdin), args)


def timeout(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    preserve = False
    while args and args[0].startswith("-") and args[0] != "-":
        flag = args.pop(0)
        if flag == "--":
            break
        if flag in ("-k", "-s", "--kill-after", "--signal"):
            args = args[1:]
        elif flag == "--preserve-status":
            preserve = True
    if len(args) < 2:
        return fail(125, "timeout: missing operand\nTry 'timeout --help' for more information.\n")
    try:
        limit = duration_s(args[0])
    except ValueError as exc:
        return fail(125, f"timeout: {exc}\nTry 'timeout --help' for more information.\n")
    inner = _dispatch(ctx, args[1:])
    if limit > 0 and (inner.hang or inner.duration_s > limit):
        rc = 128 + 15 if preserve else TIMEOUT_RC
        return Outcome(rc, inner.partial, "", limit, inner.partial)
    return inner


def env(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    values = {} if args[:1] == ["-i"] else dict(ctx.env)
    if args[:1] == ["-i"]:
        args = args[1:]
    while args and args[0] == "-u" and len(args) > 1:
        values.pop(args[1], None)
        args = args[2:]
    while args and "=" in args[0] and not args[0].startswith("="):
        name, _, value = args.pop(0).partition("=")
        values[name] = value
    if not args:
        return Outcome(0, "".join(f"{k}={v}\n" for k, v in values.items()))
    return _dispatch(ctx.at(ctx.t, values, ctx.stdin), args)


def shell(ctx: Ctx, argv: list[str]) -> Outcome:
    from sparkfabric_sim.sh.interp import Interp

    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "-c":
        args.pop(0)
    if args[:1] != ["-c"] or len(args) < 2:
        target = args[0] if args else "-"
        if target == "-":
            return Interp(NodeHost(ctx), ctx.env, start=ctx.t).run_script(ctx.stdin)
        return fail(2, f"sh: 0: cannot open {target}: No such file\n")
    return Interp(NodeHost(ctx), ctx.env, start=ctx.t).run_script(args[1], ctx.stdin)


TOOLS = {
    "sudo": sudo,
    "timeout": timeout,
    "env": env,
    "sh": shell,
    "bash": shell,
    "dash": shell,
}
