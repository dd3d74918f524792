"""Real nodes over OpenSSH, with the guarantees testinfra's ssh backend lacks.

- every command has a deadline, enforced on the node (`timeout` ends the whole process group)
  and locally (the ssh client is killed if the node stops answering);
- both output streams are drained by reader threads, so megabytes of stderr never block;
- one multiplexed connection per node (ControlMaster), at most 8 channels at once;
- a node that cannot be reached fails fast, once, with one clear line, for all its jobs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

from pytest_sparkfabric.transport.base import (
    MAX_CHANNELS_PER_NODE,
    Job,
    RealClock,
    RunResult,
    Transport,
)

_PID_MARK = "@@sparkfabric-pid:"
_PID_RE = re.compile(re.escape(_PID_MARK) + r"(\d+)\n?")
# Grace beyond a job's own deadline before the local side gives up on the ssh client.
_KILL_AFTER_S = 5
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


@dataclass(frozen=True, slots=True)
class SshTarget:
    host: str
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None


def remote_command(job: Job, *, as_root: bool) -> str:
    """The text the node's shell runs: the pid marker, the deadline, sudo where needed."""
    inner = (
        f"echo {_PID_MARK}$$ >&2; "
        f"exec timeout -k {_KILL_AFTER_S} {_seconds(job.timeout_s)} sh -c "
        f"{shlex.quote(job.command)}"
    )
    if job.sudo and not as_root:
        return f"sudo -n sh -c {shlex.quote(inner)}"
    return inner


def _seconds(value: float) -> str:
    """A deadline as GNU timeout reads it, never rounded down (2.4 s stays 2.4 s)."""
    return f"{max(value, 0.1):.3f}".rstrip("0").rstrip(".")


# OpenSSH prints these when a node's multiplexed connection is full (sshd MaxSessions) and it
# opens another connection instead: the command still runs, the lines are not its output.
_MUX_NOISE = re.compile(
    r"^(ControlSocket .* already exists, disabling multiplexing"
    r"|mux_client_request_session: session request failed: .*)\r?\n",
    re.M,
)


class _Proc:
    """One ssh client process whose two streams are read to the end in threads."""

    def __init__(self, argv: list[str]) -> None:
        self.started = time.monotonic()
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._pid: int | None = None
        self._pid_seen = threading.Event()
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._threads = [
            threading.Thread(target=_drain, args=(self.popen.stdout, self._out), daemon=True),
            threading.Thread(target=self._drain_err, args=(self.popen.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def wait(self, timeout: float) -> bool:
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        for t in self._threads:
            t.join(timeout=5)
        return True

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        for t in self._threads:
            t.join(timeout=5)

    def _drain_err(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            self._err.append(chunk)
            if self._pid is None and len(self._err) <= 4:
                m = _PID_RE.search(b"".join(self._err).decode(errors="replace"))
                if m:
                    self._pid = int(m.group(1))
                    self._pid_seen.set()
        self._pid_seen.set()
        stream.close()

    def remote_pid(self, wait_s: float = 0.0) -> int | None:
        """The remote process group id (printed first by the node); waits up to `wait_s`."""
        self._pid_seen.wait(wait_s)
        return self._pid

    def output(self) -> tuple[str, str]:
        out = b"".join(self._out).decode(errors="replace")
        err = b"".join(self._err).decode(errors="replace")
        return out, _MUX_NOISE.sub("", _PID_RE.sub("", err, count=1))


def _drain(stream: IO[bytes], sink: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
        sink.append(chunk)
    stream.close()


class SshBackground:
    def __init__(self, transport: SshTransport, job: Job, proc: _Proc) -> None:
        self.job = job
        self._t = transport
        self._proc = proc
        self._result: RunResult | None = None
        self._stopped = False
        self._lock = threading.Lock()

    def wait(self) -> RunResult:
        with self._lock:
            if self._result is None:
                self._result = self._t._finish(self.job, self._proc, stopped=self._stopped)
                self._t._forget(self)
            return self._result

    def stop(self) -> RunResult:
        # Kill before taking the lock: a wait() in another thread then returns at once.
        if self._result is None:
            self._stopped = True
            self._t._kill_remote(self.job, self._proc)
        return self.wait()


class SshTransport(Transport):
    def __init__(
        self,
        targets: Mapping[str, SshTarget],
        *,
        ssh_config: str | None = None,
        connect_timeout_s: int = 10,
        keepalive_s: int = 15,
        extra_options: tuple[str, ...] = (),
    ) -> None:
        self.clock = RealClock()
        self._targets = dict(targets)
        self._ssh_config = ssh_config
        self._connect_timeout_s = connect_timeout_s
        self._keepalive_s = keepalive_s
        self._extra = extra_options
        self._control_dir = tempfile.mkdtemp(prefix="sparkfabric-ssh-")
        self._channels = {n: threading.BoundedSemaphore(MAX_CHANNELS_PER_NODE) for n in targets}
        self._connect_locks = {n: threading.Lock() for n in targets}
        self._state: dict[str, str | None] = {}  # node -> None (up) or the unreachable line
        self._root: dict[str, bool] = {}
        self._live: set[SshBackground] = set()
        self._live_lock = threading.Lock()

    # -- ssh command lines ------------------------------------------------------------------

    def ssh_argv(self, node: str, remote: str) -> list[str]:
        t = self._targets[node]
        argv = ["ssh", "-T", "-o", "BatchMode=yes"]
        if self._ssh_config:
            argv += ["-F", self._ssh_config]
        argv += [
            "-o", f"ConnectTimeout={self._connect_timeout_s}",
            "-o", f"ServerAliveInterval={self._keepalive_s}",
            "-o", "ServerAliveCountMax=4",
            "-o", "ControlMaster=auto",
            "-o", f"ControlPath={self._control_dir}/%C",
            "-o", "ControlPersist=120",
            "-o", "LogLevel=ERROR",
        ]  # fmt: skip
        for opt in self._extra:
            argv += ["-o", opt]
        if t.user:
            argv += ["-l", t.user]
        if t.port:
            argv += ["-p", str(t.port)]
        if t.identity_file:
            argv += ["-i", os.path.expanduser(t.identity_file)]
        return [*argv, t.host, "--", remote]

    # -- connection state ---------------------------------------------------------------------

    def _connect(self, node: str) -> str | None:
        """Open (once) the node's master connection; the unreachable line or None."""
        with self._connect_locks[node]:
            if node in self._state:
                return self._state[node]
            proc = _Proc(self.ssh_argv(node, "id -u"))
            limit = self._connect_timeout_s + 5
            if not proc.wait(limit):
                proc.kill()
                self._state[node] = f"{node}: ssh: connection timed out after {limit} s"
                return self._state[node]
            out, err = proc.output()
            rc = proc.popen.returncode
            if rc == 0:
                self._state[node] = None
                self._root[node] = out.strip() == "0"
            else:
                self._state[node] = f"{node}: ssh: {self._reason(err)}"
            return self._state[node]

    def _reason(self, stderr: str) -> str:
        low = stderr.lower()
        for needle, text in _UNREACHABLE:
            if needle in low:
                return text.format(t=self._connect_timeout_s)
        last = stderr.strip().splitlines()[-1:] or ["exit status 255"]
        return last[0]

    # -- running ------------------------------------------------------------------------------

    def run(self, job: Job) -> RunResult:
        down = self._connect(job.node)
        if down:
            return RunResult(job.node, job.command, 255, "", "", 0.0, transport_error=down)
        with self._channels[job.node]:
            # Tracked like a background job, so close() ends it after a Ctrl-C mid-run.
            return self._track(SshBackground(self, job, self._spawn(job))).wait()

    def start(self, job: Job) -> SshBackground:
        down = self._connect(job.node)
        if down:
            return _FailedBackground(job, down)  # type: ignore[return-value]
        return self._track(SshBackground(self, job, self._spawn(job)))

    def _track(self, bg: SshBackground) -> SshBackground:
        with self._live_lock:
            self._live.add(bg)
        return bg

    def _forget(self, bg: SshBackground) -> None:
        with self._live_lock:
            self._live.discard(bg)

    def _spawn(self, job: Job) -> _Proc:
        remote = remote_command(job, as_root=self._root.get(job.node, False))
        return _Proc(self.ssh_argv(job.node, remote))

    def _finish(self, job: Job, proc: _Proc, *, stopped: bool = False) -> RunResult:
        limit = job.timeout_s + _KILL_AFTER_S + self._connect_timeout_s
        remaining = limit - (time.monotonic() - proc.started)
        finished = proc.wait(max(0.0, remaining))
        if not finished:
            # The node stopped answering: end the remote group ourselves, then the client.
            self._kill_remote(job, proc)
            proc.kill()
        out, err = proc.output()
        rc = proc.popen.returncode
        duration = time.monotonic() - proc.started
        timed_out = not finished or (
            rc in (124, 137) and duration >= job.timeout_s * 0.95 and not stopped
        )
        error = None
        if rc == 255 and not stopped and proc.remote_pid() is None:
            # The node never ran the command: ssh itself failed.
            error = f"{job.node}: ssh: {self._reason(err)}"
        elif rc == 255 and not stopped and duration >= job.timeout_s * 0.95:
            # `timeout -k` had to SIGKILL the tool: sshd reports the signal as 255.
            timed_out = True
        elif job.sudo and rc != 0 and "sudo:" in err and "password" in err:
            error = (
                f"{job.node}: `sudo -n {job.command.split()[0]}` was refused: the ssh user needs "
                "passwordless sudo for it (or connect as root)"
            )
        return RunResult(
            job.node, job.command, rc, out, err, duration, timed_out, error, proc.started
        )

    def _kill_remote(self, job: Job, proc: _Proc) -> None:
        # A job stopped right after it started may not have reported its pid yet.
        pid = proc.remote_pid(wait_s=self._connect_timeout_s)
        if pid is None:
            return
        kill = Job(job.node, f"kill -TERM -{pid} 2>/dev/null; true", 10, sudo=job.sudo)
        remote = remote_command(kill, as_root=self._root.get(job.node, False))
        done = _Proc(self.ssh_argv(job.node, remote))
        if not done.wait(15):
            done.kill()

    def close(self) -> None:
        with self._live_lock:
            live = list(self._live)
            self._live.clear()
        for bg in live:
            bg.stop()
        for node, state in list(self._state.items()):
            if state is None:
                p = _Proc(
                    [*self.ssh_argv(node, "true")[:-3], "-O", "exit", self._targets[node].host]
                )
                if not p.wait(5):
                    p.kill()
        shutil.rmtree(self._control_dir, ignore_errors=True)


class _FailedBackground:
    def __init__(self, job: Job, error: str) -> None:
        self.job = job
        self._result = RunResult(job.node, job.command, 255, "", "", 0.0, transport_error=error)

    def wait(self) -> RunResult:
        return self._result

    def stop(self) -> RunResult:
        return self._result
