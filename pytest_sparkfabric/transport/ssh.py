"""Real nodes over OpenSSH: every command under a deadline on the node and locally; stopping
closes the channel's stdin and the node ends the command's group (no pid is signalled over a
second connection), as our process dying does; streams drained and capped; one multiplexed
connection per node, at most 8 channels; an unreachable node fails fast, once, with one line."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_sparkfabric import shell
from pytest_sparkfabric.transport.base import (
    Finished,
    Job,
    RealClock,
    RunResult,
    Transport,
    not_run,
)
from pytest_sparkfabric.transport.process import DEFAULT_OUTPUT_CAP_BYTES, Proc, reason, ssh_argv

__all__ = ["Proc", "SshBackground", "SshTarget", "SshTransport", "remote_command"]

# -- the node side: each job's sh supervisor and its markers ----------------------------------
# The command runs in a process group of its own (GNU `timeout` makes one) under a small sh
# supervisor outside the group. Deadline: `timeout` sends the group TERM, then KILL after the
# grace. Stop, Ctrl-C, lost connection: the job's stdin is the ssh channel and nothing is written
# to it, so its end of file means "end it now". Afterwards the supervisor gives the group the
# grace to end (a tool may trap TERM), KILLs what is left, then reports the exit status. What
# comes before the start mark on stderr is not the command's: ssh's own failure, its notes when
# sshd's MaxSessions sends it to a connection of its own, the login shell's startup files.
START_MARK = "@@sparkfabric-start\n"
_END_MARK = "@@sparkfabric-rc:"
_END_RE = re.compile(re.escape(_END_MARK) + r"(\d+)\n?\Z")
GRACE_S = 5
"""How long a signalled process group may take to end before it gets SIGKILL."""


def supervisor(job: Job) -> str:
    """The sh program that runs `job.command` in its own group under the job's deadline."""
    # The grace is timed by `timeout`: counting loop rounds would stretch it on a busy node.
    drain = f"{_LEFT}while left; do sleep 0.1; done"
    seconds = f"{max(job.timeout_s, 0.1):.3f}".rstrip("0").rstrip(".")  # 2.4 s stays 2.4 s
    return (
        f"echo {START_MARK.strip()} >&2; exec 3<&0 </dev/null; "
        f"timeout -k {GRACE_S} {seconds} sh -c {shell.quote(job.command)} 3<&- & "
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
    the command's own stderr (ssh's own words before the start mark and the marks left out), or
    all of it when the supervisor never started (ssh's complaint)."""
    _, started, own = stderr.partition(START_MARK)
    if not started:
        return False, None, stderr
    end = _END_RE.search(own)
    return True, int(end.group(1)) if end else None, _END_RE.sub("", own)


# -- control sockets ----------------------------------------------------------------------------
# A unix socket path holds at most 107 bytes and OpenSSH adds a 17-character suffix while a
# master binds: under a long TMPDIR (macOS, CI) every connection fails with `unix_listener: path
# "..." too long`. So the folder is made where paths are short ($XDG_RUNTIME_DIR, TMPDIR, /tmp),
# 0700, named after this process, and each node's socket is a 12-character hash in it.
SUN_PATH_MAX = 107
# OpenSSH: the path with its bind suffix (mux.c, via misc.c unix_listener) or the path alone
# (ssh.c, checked before connecting) does not fit sun_path.
_TOO_LONG = re.compile(
    r"""unix_listener: path "(?P<a>[^"]*)" too long|ControlPath too long \('(?P<b>[^']*)'""", re.I
)


def folder_prefix() -> str:
    return f"sf{os.getpid()}-"  # tests check that no control folder is left behind


def candidates() -> list[str]:
    found = [os.environ.get("XDG_RUNTIME_DIR", ""), tempfile.gettempdir(), "/tmp"]
    return list(dict.fromkeys(c for c in found if c))


def make_folder() -> Path | None:
    """A new private folder for control sockets, or None (warned, with the fix)."""
    tried: list[str] = []
    for base in candidates():
        # base/sfPID-XXXXXXXX/<12-character name>.<OpenSSH's 17-character bind suffix>
        if len(base) + len(folder_prefix()) + 10 + 12 + 17 > SUN_PATH_MAX:
            tried.append(f"{base} is too long a path")
            continue
        try:
            return Path(tempfile.mkdtemp(prefix=folder_prefix(), dir=base))
        except OSError as err:
            tried.append(f"{base}: {err.strerror or err}")
    warnings.warn(
        f"sparkfabric: no short private folder for ssh control sockets ({'; '.join(tried)}): "
        "every command opens its own ssh connection, which is slower. "
        "Fix: make /tmp writable, or set XDG_RUNTIME_DIR to a short folder you own",
        RuntimeWarning,
        stacklevel=2,
    )
    return None


def socket_name(node: str, host: str, user: str | None, port: int | None) -> str:
    """As unique as ssh's %C (a hash of where the connection goes), and short."""
    key = "\0".join((node, host, user or "", str(port or "")))
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def too_long_message(node: str, stderr: str) -> str | None:
    """The line for OpenSSH's `path ... too long for Unix domain socket`, with the fix."""
    m = _TOO_LONG.search(stderr)
    if m is None:
        return None
    path = m.group("a") or m.group("b")
    return (
        f"{node}: ssh: the control socket path {path} is too long for a unix socket "
        f"({len(path)} bytes, while {SUN_PATH_MAX} is the most, ssh's 17-byte suffix included);"
        " the node itself was not tried. "
        "Fix: shorten ControlPath in your ssh_config (ProxyJump hosts use it too), "
        "e.g. ControlPath ~/.ssh/cm-%C"
    )


_UNREACHABLE = (
    ("connection timed out", "connection timed out after {t} s"),
    ("operation timed out", "connection timed out after {t} s"),
    ("connection refused", "connection refused"),
    ("no route to host", "no route to host"),
    ("could not resolve hostname", "could not resolve host name"),
    ("permission denied", "authentication failed (permission denied)"),
    ("host key verification failed", "host key verification failed"),
    ("connection closed by", "connection closed by the node"),
    ("connection reset", "connection reset"),
)
MAX_CHANNELS_PER_NODE = 8
_OPTIONS = ["BatchMode=yes", "ServerAliveInterval=15", "ServerAliveCountMax=4", "LogLevel=ERROR"]


@dataclass(frozen=True, slots=True)
class SshTarget:
    host: str
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None


class SshBackground:
    def __init__(self, transport: SshTransport, job: Job, proc: Proc) -> None:
        self.job, self._t, self._proc = job, transport, proc
        self._result: RunResult | None = None
        self._stopped = False
        self._lock = threading.Lock()

    def done(self) -> bool:
        return self._result is not None or self._proc.done()

    def wait(self) -> RunResult:
        with self._lock:
            if self._result is None:
                self._result = self._finish(self._stopped)
                with self._t._live_lock:
                    self._t._live.discard(self)
            return self._result

    def ask_to_stop(self) -> None:
        """Tell the node to end the command (returns at once); one that ended is left alone."""
        if self._result is None and not self._proc.done():
            self._stopped = True
            self._proc.end_stdin()

    def stop(self) -> RunResult:
        # Before taking the lock: a wait() in another thread then returns as the node ends it.
        self.ask_to_stop()
        return self.wait()

    def _finish(self, stopped: bool) -> RunResult:
        job, proc = self.job, self._proc
        # Stopped: the node needs the grace at most (a group that ignores TERM), plus a round
        # trip; else the deadline too.
        left = 0.0 if stopped else job.timeout_s - (time.monotonic() - proc.started)
        finished = proc.wait(left + 2 * GRACE_S + self._t.connect_timeout_s)
        if not finished:
            # The node stopped answering: the closed stdin ends the group if it ever hears.
            proc.end_stdin()
            proc.kill()
        duration = time.monotonic() - proc.started
        ran, reported, err = read_marks(proc.err.text())
        rc = reported if reported is not None else proc.popen.returncode
        error: str | None = None
        timed_out = False
        if not finished:
            rc, timed_out = (143, False) if stopped else (124, True)
        elif reported is not None:
            timed_out = not stopped and rc in (124, 137) and duration >= job.timeout_s * 0.95
        elif not ran and rc == 255:
            error = self._t.reason(job.node, err)  # ssh itself failed: the node never ran it
        elif ran and not stopped:
            short = " ".join(job.command.split())
            short = short if len(short) <= 60 else short[:56].rstrip() + " ..."
            error = f"{job.node}: ssh: connection lost during '{short}'"
        out, started = proc.out.text(), proc.started
        return RunResult(job.node, job.command, rc, out, err, duration, timed_out, error, started)


class SshTransport(Transport):
    def __init__(
        self,
        targets: Mapping[str, SshTarget],
        *,
        ssh_config: str | None = None,
        connect_timeout_s: int = 10,
        extra_options: tuple[str, ...] = (),
        output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES,
    ) -> None:
        self.clock = RealClock()
        self._targets = dict(targets)
        self.switch_ssh_config = os.path.expanduser(ssh_config) if ssh_config else None
        self.connect_timeout_s = connect_timeout_s
        self._extra = extra_options
        self.output_cap_bytes = output_cap_bytes
        self._folder: Path | None = None
        self._folder_made = False
        self._folder_lock = threading.Lock()
        self._remove_folder: Callable[[], object] = lambda: None
        self._channels = {n: threading.BoundedSemaphore(MAX_CHANNELS_PER_NODE) for n in targets}
        self._connect_locks = {n: threading.Lock() for n in targets}
        self.up: dict[str, bool | str] = {}
        """node -> whether its ssh user is root, or the line saying why it cannot be reached"""
        self._live: set[SshBackground] = set()
        self._live_lock = threading.Lock()
        self._closed = False

    def control_folder(self) -> Path | None:
        """The private folder of this transport's control sockets, made at first use."""
        with self._folder_lock:
            if not self._folder_made:
                self._folder, self._folder_made = make_folder(), True
                if self._folder is not None:
                    # A transport nobody closed still leaves no folder behind at exit.
                    self._remove_folder = weakref.finalize(
                        self, shutil.rmtree, str(self._folder), True
                    )
            return self._folder

    def ssh_argv(self, node: str, remote: str | None) -> list[str]:
        t = self._targets[node]
        control, folder = ["ControlMaster=no", "ControlPath=none"], self.control_folder()
        if folder is not None:
            path = folder / socket_name(node, t.host, t.user, t.port)
            control = ["ControlMaster=auto", f"ControlPath={path}", "ControlPersist=120"]
        options = [*_OPTIONS, f"ConnectTimeout={self.connect_timeout_s}", *control, *self._extra]
        port = str(t.port) if t.port else None
        config = self.switch_ssh_config
        return ssh_argv(t.host, remote, options, config, t.user, port, t.identity_file)

    def _connect(self, node: str) -> bool | str:
        """Open (once) the node's master connection: whether it logs in as root, or the line
        saying why it cannot be reached."""
        with self._connect_locks[node]:
            if node not in self.up:
                proc = Proc(self.ssh_argv(node, "id -u"), cap_bytes=65536)
                limit = self.connect_timeout_s + 5
                if not proc.wait(limit):
                    proc.kill()
                    self.up[node] = f"{node}: ssh: connection timed out after {limit} s"
                elif proc.popen.returncode == 0:
                    self.up[node] = proc.out.text().strip() == "0"
                else:
                    self.up[node] = self.reason(node, proc.err.text())
            return self.up[node]

    def reason(self, node: str, stderr: str) -> str:
        why = reason(stderr, _UNREACHABLE, "exit status 255")
        timeout = str(self.connect_timeout_s)
        return too_long_message(node, stderr) or f"{node}: ssh: {why.replace('{t}', timeout)}"

    def run(self, job: Job) -> RunResult:
        with self._channels[job.node]:
            # Tracked like a background job, so close() ends it after a Ctrl-C mid-run.
            return self.start(job).wait()

    def start(self, job: Job) -> SshBackground | Finished:
        state = self._connect(job.node)
        with self._live_lock:
            if isinstance(state, str):
                return Finished(job, not_run(job, state))
            if self._closed:
                # The session is ending (Ctrl-C): a command started now would outlive it.
                why = f"{job.node}: not started: the run is being ended"
                return Finished(job, not_run(job, why))
            argv = self.ssh_argv(job.node, remote_command(job, as_root=state))
            bg = SshBackground(
                self, job, Proc(argv, cap_bytes=self.output_cap_bytes, hold_stdin=True)
            )
            self._live.add(bg)
        return bg

    def close(self) -> None:
        """End every command still running, then the connections. The work happens in its own
        thread: a second Ctrl-C interrupts only the waiting here, not the ending."""
        with self._live_lock:
            self._closed = True
            live = list(self._live)
        ender = threading.Thread(target=self._end_everything, args=(live,))
        ender.start()
        ender.join()

    def _end_everything(self, live: list[SshBackground]) -> None:
        for bg in live:
            bg.ask_to_stop()
        for bg in live:
            bg.stop()  # leaves the live set once the node has ended it (or stopped answering)
        for node, state in list(self.up.items()):
            if not isinstance(state, str) and self._folder is not None:
                argv = self.ssh_argv(node, None)
                p = Proc([*argv[:-2], "-O", "exit", *argv[-2:]], cap_bytes=65536)
                if not p.wait(5):
                    p.kill()
        self._remove_folder()
