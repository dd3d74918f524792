"""The POSIX sh text each job runs on a node, and what its markers tell back.

The command runs in a process group of its own (GNU `timeout` makes one) under a small sh
supervisor that stays outside the group:

- deadline: `timeout` signals the group with TERM, then KILL after the grace;
- stop, Ctrl-C, lost connection: the job's stdin is the ssh channel and nothing is ever written
  to it, so its end of file (we closed it, our process died, the connection dropped) means
  "end it now": the group gets TERM. No pid travels back over a second connection, so nothing is
  ever signalled after it exited (its pid may belong to another process by then);
- afterwards: `timeout` returns as soon as its direct child (`sh -c`) is gone, while a tool that
  ignores or traps TERM may still run in the group; the supervisor gives the group the grace to
  end, then KILLs whatever is left, and only then reports the exit status.

Markers on stderr: the supervisor started (so a failure before it is ssh's, or sudo's), and the
exit status (so a connection lost mid-command is told from a command that exited 255).
"""

from __future__ import annotations

import re

from pytest_sparkfabric import shell
from pytest_sparkfabric.transport.base import Job

START_MARK = "@@sparkfabric-start"
_END_MARK = "@@sparkfabric-rc:"
_END_RE = re.compile(re.escape(_END_MARK) + r"(\d+)\n?\Z")
_START_RE = re.compile(re.escape(START_MARK) + r"\n")
GRACE_S = 5
"""How long a signalled process group may take to end before it gets SIGKILL."""


def seconds(value: float) -> str:
    """A deadline as GNU timeout reads it, never rounded down (2.4 s stays 2.4 s)."""
    return f"{max(value, 0.1):.3f}".rstrip("0").rstrip(".")


def supervisor(job: Job) -> str:
    """The sh program that runs `job.command` in its own group under the job's deadline."""
    # The grace is timed by `timeout`: counting loop rounds would stretch it on a busy node.
    drain = f"{_LEFT}while left; do sleep 0.1; done"
    return (
        f"echo {START_MARK} >&2; exec 3<&0 </dev/null; "
        f"timeout -k {GRACE_S} {seconds(job.timeout_s)} sh -c {shell.quote(job.command)} 3<&- & "
        "g=$!; "
        # The watcher: the channel's end of file ends the group (ESRCH: not yet its own group).
        "{ read -r _ <&3; kill -TERM -$g 2>/dev/null || kill -TERM $g 2>/dev/null; } & w=$!; "
        "exec 3<&-; "
        "trap 'kill -TERM -$g 2>/dev/null || kill -TERM $g 2>/dev/null' HUP INT TERM; "
        # A trapped signal interrupts `wait`: wait again while `timeout` is not reaped.
        "while :; do wait $g; rc=$?; kill -0 $g 2>/dev/null || break; done; "
        "kill $w 2>/dev/null; "
        "if kill -TERM -$g 2>/dev/null; then "
        f"G=$g timeout {GRACE_S} sh -c {shell.quote(drain)}; "
        "kill -KILL -$g 2>/dev/null; fi; "
        f"echo {_END_MARK}$rc >&2; exit $rc"
    )


# Whether a process of group $G still runs. `kill -0` alone also counts zombies, which a slow
# init may leave unreaped for seconds; /proc/PID/stat holds `pid (comm) state ppid pgrp ...`
# (comm may hold spaces and parentheses: cut at the last ") "). Without /proc: assume it runs.
_LEFT = (
    "left() { kill -0 -$G 2>/dev/null || return 1; [ -r /proc/self/stat ] || return 0; "
    'for f in /proc/[0-9]*/stat; do { read -r l <"$f"; } 2>/dev/null || continue; '
    'set -- ${l##*) }; [ "$3" = "$G" ] && [ "$1" != Z ] && return 0; done; return 1; }; '
)


def remote_command(job: Job, *, as_root: bool) -> str:
    """What ssh asks the node's login shell to run: sh (whatever the login shell is), under
    `sudo -n` where the job needs root and the ssh user is not root."""
    if job.sudo and not as_root:
        # `sudo -n` on the command itself, so a sudoers line can allow exactly it
        # (`NOPASSWD: /usr/sbin/ethtool -m *`), not a whole shell.
        job = Job(job.node, f"sudo -n {job.command}", job.timeout_s)
    return f"exec sh -c {shell.quote(supervisor(job))}"


def read_marks(stderr: str) -> tuple[bool, int | None, str]:
    """Whether the supervisor started, the exit status it reported (None: it never did), and
    the command's own stderr without the markers."""
    own, started = _START_RE.subn("", stderr, count=1)
    end = _END_RE.search(own)
    return started == 1, int(end.group(1)) if end else None, _END_RE.sub("", own)
