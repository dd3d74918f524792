"""The switch's console over OpenSSH: one read-only RouterOS command per session (`ssh ...
user+ct@switch '<command>'`, MikroTik's "Executing remote commands"), under a deadline kept here
(ending the client ends the command). A password goes by an askpass helper; host keys checked."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_sparkfabric.probes.routeros_commands import command_problem
from pytest_sparkfabric.transport.process import Proc, reason, ssh_argv, ssh_shows
from pytest_sparkfabric.transport.rest import (
    MAX_REPLY_BYTES,
    Secrets,
    SwitchError,
    SwitchUnreachable,
    not_readable,
    spec_password,
    spec_path,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.spec import SwitchSpec

TIMEOUT_S = 20.0
CONNECT_TIMEOUT_S = 10
SSH_PORT = 22
_PASSWORD_VAR = "SPARKFABRIC_SWITCH_SSH_PASSWORD"
# ssh runs the helper with the prompt as its argument and our environment (SSH_ASKPASS_REQUIRE=
# force, OpenSSH 8.4+), so the password is in no file and on no command line. It answers only
# ssh's password prompt ("%s@%s's password: ", OpenSSH sshconnect2.c userauth_passwd) and a
# keyboard-interactive "Password:"; anything else (a host key question, a key's passphrase)
# gets no answer and ssh gives up at once (readpass.c: a failing askpass is a refusal).
_ASKPASS = f"""#!/bin/sh
case "$1" in
  *"'s password: "|[Pp]assword:|[Pp]assword:" ") printf '%s\\n' "${_PASSWORD_VAR}" ;;
  *) exit 1 ;;
esac
"""

_REASONS = (
    ("permission denied", "authentication failed (permission denied): import the user's public "
     "key on the switch (/user/ssh-keys/import) and set switch.identity_file, or set "
     "switch.password_env; the user's group needs the ssh and read policies"),
    ("remote host identification has changed", "the host key CHANGED since it was stored in "
     "known_hosts (a new switch, or someone in between): check the fingerprint on the switch's "
     "console, then replace its line (ssh-keygen -R HOST)"),
    ("host key is known for", "host key unknown (not in known_hosts; ssh checks it, the password "
     "never accepts one). Fix: check its fingerprint, then ssh-keyscan -p PORT HOST >> "
     "~/.ssh/known_hosts"),
    ("host key verification failed", "host key verification failed: add the switch's host key "
     "to ~/.ssh/known_hosts (ssh-keyscan -p PORT HOST, after checking its fingerprint)"),
    ("connection refused", "connection refused: enable the ssh service (/ip service) or set "
     "the SSH port (switch.api_port with api ssh, switch.ssh_port with auto)"),
    ("connection timed out", f"connection timed out after {CONNECT_TIMEOUT_S} s"),
    ("operation timed out", f"connection timed out after {CONNECT_TIMEOUT_S} s"),
    ("no route to host", "no route to host"),
    ("could not resolve hostname", "could not resolve the host name switch.host"),
    ("connection closed by", "the switch closed the connection (ssh service allowed from "
     "this address? /ip service address=)"),
)  # fmt: skip


@dataclass(eq=False)
class SshConsole:
    """RouterOS's console over OpenSSH, one read-only command per session, under a deadline."""

    host: str
    user: str
    port: int = SSH_PORT
    identity_file: str | None = None
    ssh_config: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout_s: float = TIMEOUT_S

    def __post_init__(self) -> None:
        self._secrets = Secrets(self.user, self.password)
        self._login = f"{self.user}+ct"  # RouterOS login options: no colours, no terminal detection
        self._askpass: Path | None = None
        self._host_keys: list[str] | None = None

    def argv(self, command: str | None) -> list[str]:
        """The ssh command line of one read (no password on it, ever); None: without options,
        for `ssh -G`."""
        options = [] if command is None else [
            *self._host_key_options(), f"BatchMode={'yes' if self.password is None else 'no'}",
            f"ConnectTimeout={CONNECT_TIMEOUT_S}", "ControlMaster=no", "ControlPath=none",
            "LogLevel=ERROR", "NumberOfPasswordPrompts=1",
        ]  # fmt: skip
        user, port = self._login, str(self.port)
        return ssh_argv(
            self.host, command, options, self.ssh_config, user, port, self.identity_file
        )

    def _host_key_options(self) -> list[str]:
        """StrictHostKeyChecking=yes unless the user's ssh config sets it (`ssh -G` shows the
        default `ask` otherwise); `ask` would put the question to the askpass helper."""
        if self._host_keys is None:
            own = ssh_shows(self.argv(None)[1:], "stricthostkeychecking", timeout_s=5)
            keep = own is not None and own.lower() != "ask"
            self._host_keys = [] if keep else ["StrictHostKeyChecking=yes"]
        return self._host_keys

    def _env(self) -> dict[str, str] | None:
        if self.password is None:
            return None
        if self._askpass is None:
            folder = Path(tempfile.mkdtemp(prefix="sf-askpass-"))
            weakref.finalize(self, shutil.rmtree, str(folder), True)
            self._askpass = folder / "askpass"
            fd = os.open(self._askpass, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
            with os.fdopen(fd, "w") as fh:
                fh.write(_ASKPASS)
        askpass = {"SSH_ASKPASS": str(self._askpass), "SSH_ASKPASS_REQUIRE": "force"}
        display = os.environ.get("DISPLAY", ":0")
        return {**os.environ, **askpass, "DISPLAY": display, _PASSWORD_VAR: self.password}

    def run(self, command: str) -> str:
        """RouterOS's answer to `command`. SwitchError when the command is not a plain read
        (nothing is sent) or had no answer in time; SwitchUnreachable when ssh cannot log in or
        the answer is over MAX_REPLY_BYTES."""
        problem = command_problem(command)
        if problem is not None:
            raise SwitchError(
                f"refused to send `{command}` to the switch: it {problem}; the suite only "
                "reads (print, monitor ... once, get)"
            )
        where = f"ssh {self._login}@{self.host}:{self.port} `{command}`"
        try:
            return self._secrets.text(self._run(command))
        except SwitchError as exc:
            raise type(exc)(self._secrets.text(f"{where}: {exc}")) from None

    def _run(self, command: str) -> str:
        try:
            proc = Proc(self.argv(command), cap_bytes=MAX_REPLY_BYTES, env=self._env())
        except OSError as exc:
            raise SwitchUnreachable(f"cannot start ssh ({exc}): install OpenSSH") from None
        end, finished = time.monotonic() + self.timeout_s, False
        try:
            while not (finished or proc.out.dropped or time.monotonic() >= end):
                left = end - time.monotonic()
                finished = proc.wait(min(0.1, left), drain_s=max(0.0, left)) and proc.drained()
        finally:
            if not finished:  # closing the session ends the command on the switch
                proc.kill()
        if proc.out.dropped:
            raise not_readable(
                f"the answer is over {MAX_REPLY_BYTES // 2**20} MiB; the session was closed"
            )
        if not finished:
            raise SwitchError(
                f"no answer within {self.timeout_s:g} s; the session was closed, which ends the "
                "command on the switch"
            )
        text, errors = proc.out.text(), proc.err.text()
        if proc.popen.returncode == 255:
            why = reason(errors, _REASONS, "ssh exited with status 255")
            raise SwitchUnreachable(why.replace("HOST", self.host).replace("PORT", str(self.port)))
        if proc.popen.returncode != 0 and not text.strip():
            raise SwitchError(
                f"exit status {proc.popen.returncode}: {reason(errors, (), 'no output')}"
            )
        return text


def ssh_console(
    spec: SwitchSpec, base_dir: Path | None = None, ssh_config: str | None = None
) -> SshConsole:
    """The real switch's console, as cluster.yaml's switch: section describes it (its SSH port:
    api_port with api ssh, ssh_port with auto, else 22)."""
    identity = spec_path(spec.identity_file, base_dir)
    fix = "export it, or set switch.identity_file to a key the switch knows"
    port = spec.api_port if spec.api == "ssh" and spec.api_port is not None else spec.ssh_port
    return SshConsole(
        spec.host,
        spec.user,
        port=port or SSH_PORT,
        identity_file=str(identity) if identity else None,
        ssh_config=ssh_config,
        password=spec_password(spec, required=identity is None, fix=fix),
    )
