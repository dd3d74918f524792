"""The switch's console over OpenSSH: one read-only RouterOS command per connection.

RouterOS runs a command given on the ssh command line and closes the session; its SSH server
has no pseudo-terminal for such a session and takes one line only (MikroTik manual,
management-tools/ssh.md, "Executing remote commands"). So each read is `ssh ... user+ct@switch
'<command>'`: the `+ct` login options turn colours and terminal detection off (`routeros_commands.
login_user`). There is no shell on the switch to run our deadline supervisor: the deadline is
kept here, and ending the ssh client closes the session, which ends the command on the switch.
No connection is multiplexed (RouterOS's server is not OpenSSH; one short session per read).

Every command is checked read-only (`routeros_commands.command_problem`) before it leaves:
print, monitor ... once, get; nothing else is ever sent. Authentication: a key (the user's
public key imported with `/user/ssh-keys/import`; switch.identity_file, or ssh's own agent and
config), or the password from switch.password_env, handed to ssh by an askpass helper (never on
a command line).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_sparkfabric.probes.routeros_commands import command_problem, login_user
from pytest_sparkfabric.transport.switch import SwitchError, SwitchUnreachable

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.spec import SwitchSpec

TIMEOUT_S = 20.0
CONNECT_TIMEOUT_S = 10
SSH_PORT = 22
MAX_REPLY_BYTES = 8 * 2**20
_PASSWORD_VAR = "SPARKFABRIC_SWITCH_SSH_PASSWORD"
# Prints the password ssh asks for; ssh runs it with our environment (SSH_ASKPASS_REQUIRE=force,
# OpenSSH 8.4+), so the password is in no file and on no command line.
_ASKPASS = f'#!/bin/sh\nprintf "%s\\n" "${_PASSWORD_VAR}"\n'

_REASONS = (
    ("permission denied", "authentication failed (permission denied): import the user's public "
     "key on the switch (/user/ssh-keys/import) and set switch.identity_file, or set "
     "switch.password_env; the user's group needs the ssh and read policies"),
    ("host key verification failed", "host key verification failed: add the switch's host key "
     "to ~/.ssh/known_hosts (connect once by hand and check its fingerprint)"),
    ("connection refused", "connection refused: enable the ssh service (/ip service) or set "
     "the SSH port (switch.api_port with api ssh, switch.ssh_port with auto)"),
    ("connection timed out", f"connection timed out after {CONNECT_TIMEOUT_S} s"),
    ("operation timed out", f"connection timed out after {CONNECT_TIMEOUT_S} s"),
    ("no route to host", "no route to host"),
    ("could not resolve hostname", "could not resolve the host name switch.host"),
    ("connection closed by", "the switch closed the connection (ssh service allowed from "
     "this address? /ip service address=)"),
)  # fmt: skip


class SshConsole:
    """RouterOS's console over OpenSSH, one read-only command per session, under a deadline."""

    def __init__(
        self,
        host: str,
        user: str,
        *,
        port: int | None = None,
        identity_file: str | None = None,
        ssh_config: str | None = None,
        password: str | None = None,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.host = host
        self.user = user
        self.port = port or SSH_PORT
        self.identity_file = identity_file
        self.ssh_config = ssh_config
        self.timeout_s = timeout_s
        self._password = password
        self._askpass: Path | None = None

    def argv(self, command: str) -> list[str]:
        """The ssh command line of one read (no password on it, ever)."""
        argv = ["ssh", "-T"]
        if self.ssh_config:
            argv += ["-F", self.ssh_config]
        batch = "no" if self._password is not None else "yes"
        argv += [
            "-o", f"BatchMode={batch}",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o", "ControlMaster=no",
            "-o", "ControlPath=none",
            "-o", "LogLevel=ERROR",
            "-o", "NumberOfPasswordPrompts=1",
            "-l", login_user(self.user),
            "-p", str(self.port),
        ]  # fmt: skip
        if self.identity_file:
            argv += ["-i", os.path.expanduser(self.identity_file)]
        return [*argv, "--", self.host, command]

    def _env(self) -> dict[str, str] | None:
        if self._password is None:
            return None
        if self._askpass is None:
            folder = Path(tempfile.mkdtemp(prefix="sf-askpass-"))
            path = folder / "askpass"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
            with os.fdopen(fd, "w") as fh:
                fh.write(_ASKPASS)
            weakref.finalize(self, shutil.rmtree, str(folder), True)
            self._askpass = path
        env = dict(os.environ)
        env.update(
            {
                "SSH_ASKPASS": str(self._askpass),
                "SSH_ASKPASS_REQUIRE": "force",
                "DISPLAY": env.get("DISPLAY", ":0"),
                _PASSWORD_VAR: self._password,
            }
        )
        return env

    def run(self, command: str) -> str:
        """RouterOS's answer to `command` (stdout as text). SwitchError when the command is not
        a plain read (nothing is sent) or the switch did not answer in time; SwitchUnreachable
        when ssh cannot log in at all."""
        problem = command_problem(command)
        if problem is not None:
            raise SwitchError(
                f"refused to send `{command}` to the switch: it {problem}; the suite only "
                "reads (print, monitor ... once, get)"
            )
        where = f"ssh {login_user(self.user)}@{self.host}:{self.port} `{command}`"
        try:
            proc = subprocess.Popen(
                self.argv(command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env(),
                start_new_session=True,
            )
        except OSError as exc:
            raise SwitchUnreachable(f"{where}: cannot start ssh ({exc}): install OpenSSH") from None
        try:
            out, err = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            # Closing the session ends the command on the switch (no shell there to signal).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise SwitchError(
                f"{where}: no answer within {self.timeout_s:g} s; the session was closed, "
                "which ends the command on the switch"
            ) from None
        text = out[:MAX_REPLY_BYTES].decode("utf-8", "replace")
        if proc.returncode == 255:
            raise SwitchUnreachable(f"{where}: {reason(err.decode('utf-8', 'replace'))}")
        if proc.returncode != 0 and not text.strip():
            last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise SwitchError(f"{where}: exit status {proc.returncode}: {last[0]}")
        return text


def reason(stderr: str) -> str:
    """ssh's complaint as the one line an operator can act on."""
    low = stderr.lower()
    for needle, text in _REASONS:
        if needle in low:
            return text
    last = stderr.strip().splitlines()[-1:] or ["ssh exited with status 255"]
    return last[0]


def ssh_port(spec: SwitchSpec) -> int:
    """The switch's SSH port: api_port with api ssh, ssh_port with auto, else 22."""
    if spec.api == "ssh" and spec.api_port is not None:
        return spec.api_port
    return spec.ssh_port or SSH_PORT


def ssh_console(
    spec: SwitchSpec, base_dir: Path | None = None, ssh_config: str | None = None
) -> SshConsole:
    """The real switch's console, as cluster.yaml's switch: section describes it.

    `base_dir`: the cluster file's folder, where a relative identity_file is."""
    identity = spec.identity_file
    if identity is not None:
        path = Path(identity).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        identity = str(path)
    password = None
    if spec.password_env is not None:
        password = os.environ.get(spec.password_env)
        if password is None and identity is None:
            raise SwitchUnreachable(
                f"the password variable ${spec.password_env} (switch.password_env) is not "
                "set: export it, or set switch.identity_file to a key the switch knows"
            )
    return SshConsole(
        spec.host,
        spec.user,
        port=ssh_port(spec),
        identity_file=identity,
        ssh_config=ssh_config,
        password=password,
    )
