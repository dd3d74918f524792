"""The switch's console over OpenSSH: read-only before anything leaves, a deadline that closes
the session, output capped, ssh's failures as lines an operator can act on, host keys checked,
the password given to password prompts only; `auto` choosing between REST and SSH."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_sparkfabric.cluster.spec import SwitchSpec
from pytest_sparkfabric.measure.switch import Reads, open_access
from pytest_sparkfabric.probes.routeros_commands import RESOURCE
from pytest_sparkfabric.transport.rest import SwitchError, SwitchUnreachable
from pytest_sparkfabric.transport.switch_ssh import SshConsole, ssh_console

RESOURCE_TEXT = "                 cpu-load: 7%\n               board-name: CRS804-4DDQ\n"


def _fake_ssh(tmp: Path, monkeypatch: pytest.MonkeyPatch, body: str, strict: str = "ask") -> Path:
    """An `ssh` first on PATH: `-G` shows StrictHostKeyChecking `strict` (as the user's config
    would set it); a connection logs its argv to tmp/argv and runs `body`."""
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "ssh"
    script.write_text(
        f'#!/bin/sh\n[ "$1" = -G ] && echo "stricthostkeychecking {strict}" && exit 0\n'
        f'printf "%s\\n" "$@" > "{tmp}/argv"\n{body}\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tmp / "argv"


def test_one_read_runs_as_user_plus_ct_with_host_keys_checked_and_nothing_else_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = _fake_ssh(tmp_path, monkeypatch, f"printf '{RESOURCE_TEXT}'")
    assert Reads(console=SshConsole("10.0.0.2", "ro", port=2222, identity_file="~/k")).resource()
    argv = argv_file.read_text().splitlines()
    assert argv[-3:] == ["--", "10.0.0.2", RESOURCE]
    assert argv[argv.index("-l") : argv.index("-l") + 4] == ["-l", "ro+ct", "-p", "2222"]
    for option in ("StrictHostKeyChecking=yes", "BatchMode=yes", "ControlMaster=no"):
        assert option in argv
    assert os.path.expanduser("~/k") in argv
    # The user's own setting stands.
    _fake_ssh(tmp_path, monkeypatch, "", strict="accept-new")
    SshConsole("10.0.0.2", "ro").run(RESOURCE)
    assert "StrictHostKeyChecking=yes" not in argv_file.read_text()
    # Anything but a read is refused before it leaves.
    argv_file.unlink()
    with pytest.raises(SwitchError) as err:
        SshConsole("10.0.0.2", "ro").run("/system reboot")
    assert str(err.value) == (
        "refused to send `/system reboot` to the switch: it has no verb among print, monitor, "
        "get; the suite only reads (print, monitor ... once, get)"
    )
    assert not argv_file.exists()


@pytest.mark.parametrize(
    ("body", "error", "says"),
    [
        ("sleep 30", SwitchError,
         "no answer within 1 s; the session was closed, which ends the command on the switch"),
        ("exec >&- 2>&-; sleep 30", SwitchError,
         "no answer within 1 s; the session was closed, which ends the command on the switch"),
        ("exec yes", SwitchUnreachable,
         "switch not readable: the answer is over 8 MiB; the session was closed"),
        ("echo 'ro@10.0.0.2: Permission denied (publickey,password).' >&2; exit 255",
         SwitchUnreachable, "authentication failed (permission denied): import the user's "
         "public key on the switch (/user/ssh-keys/import) and set switch.identity_file, or set "
         "switch.password_env; the user's group needs the ssh and read policies"),
        ("echo 'ssh: connect to host 10.0.0.2 port 22: Connection refused' >&2; exit 255",
         SwitchUnreachable, "connection refused: enable the ssh service (/ip service) or set "
         "the SSH port (switch.api_port with api ssh, switch.ssh_port with auto)"),
        ("echo '@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @' >&2; exit 255",
         SwitchUnreachable, "the host key CHANGED since it was stored in known_hosts (a new "
         "switch, or someone in between): check the fingerprint on the switch's console, then "
         "replace its line (ssh-keygen -R 10.0.0.2)"),
        ("echo 'sh: 1: /system: not found' >&2; exit 127", SwitchError,
         "exit status 127: sh: 1: /system: not found"),
    ],
    ids=["deadline", "silent", "flood", "permission", "refused", "changed-key", "exit-status"],
)  # fmt: skip
def test_failures_are_one_line_each_within_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, error: type[Exception], says: str
) -> None:
    _fake_ssh(tmp_path, monkeypatch, body)
    start = time.monotonic()
    with pytest.raises(error) as err:
        SshConsole("10.0.0.2", "ro", timeout_s=1).run(RESOURCE)
    assert time.monotonic() - start < 4 and type(err.value) is error
    assert str(err.value) == f"ssh ro+ct@10.0.0.2:22 `{RESOURCE}`: {says}"


def test_the_console_from_the_switch_section_the_password_by_askpass_to_prompts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ask = (
        '"$SSH_ASKPASS" "Are you sure you want to continue connecting (yes/no/[fingerprint])? "'
        '; echo "host key: $?"\n'
        '"$SSH_ASKPASS" "Enter passphrase for key \'/k\': "; echo "passphrase: $?"\n'
        'echo "password: $("$SSH_ASKPASS" "ro+ct@10.0.0.2\'s password: ")"'
    )
    argv_file = _fake_ssh(tmp_path, monkeypatch, ask)
    monkeypatch.setenv("SWPW", "s3cret%1")
    console = ssh_console(SwitchSpec(host="10.0.0.2", user="ro", password_env="SWPW", api="ssh"))
    # Refused (status 1, nothing printed) but the password prompt; the answer is redacted.
    assert console.run(RESOURCE) == "host key: 1\npassphrase: 1\npassword: [redacted]\n"
    argv = argv_file.read_text()
    assert "s3cret" not in argv and "BatchMode=no" in argv
    # The console from the switch section, its port per api.
    spec = SwitchSpec(host="10.0.0.2", user="ro", password_env="SF_UNSET_VAR_X", api="ssh")
    with pytest.raises(SwitchUnreachable) as err:
        ssh_console(spec)
    assert str(err.value) == (
        "the password variable $SF_UNSET_VAR_X (switch.password_env) is not set: export it, or "
        "set switch.identity_file to a key the switch knows"
    )
    assert ssh_console(SwitchSpec(host="h", user="u", api="ssh", api_port=2200)).port == 2200
    auto = SwitchSpec(host="h", user="u", api="auto", api_port=8443, ssh_port=2201)
    assert ssh_console(auto).port == 2201
    assert ssh_console(SwitchSpec(host="h", user="u", api="auto")).port == 22


def test_host_keys_are_checked_against_a_real_sshd(
    local_sshd: tuple[int, Path], tmp_path: Path
) -> None:
    port, keys = local_sshd
    known, config = tmp_path / "known_hosts", tmp_path / "ssh_config"
    known.write_text("")

    def read(own: str = "") -> str:
        config.write_text(f"UserKnownHostsFile {known}\nGlobalKnownHostsFile /dev/null\n{own}")
        console = SshConsole(
            "127.0.0.1", "root", port=port, identity_file=str(keys / "user"),
            ssh_config=str(config), password="never-asked", timeout_s=10,
        )  # fmt: skip
        start = time.monotonic()
        with pytest.raises(SwitchUnreachable) as err:
            console.run(RESOURCE)
        assert time.monotonic() - start < 5
        return str(err.value).removeprefix(f"ssh root+ct@127.0.0.1:{port} `{RESOURCE}`: ")

    assert read() == (
        "host key unknown (not in known_hosts; ssh checks it, the password never accepts one). "
        f"Fix: check its fingerprint, then ssh-keyscan -p {port} 127.0.0.1 >> ~/.ssh/known_hosts"
    )
    # Known (or accepted by the user's own config): ssh gets as far as the login, which fails
    # (there is no user root+ct).
    known.write_text(f"[127.0.0.1]:{port} {(keys / 'host.pub').read_text()}")
    assert read().startswith("authentication failed (permission denied)")
    known.write_text("")
    assert read("StrictHostKeyChecking accept-new\n").startswith("authentication failed")
    assert known.read_text().startswith(f"[127.0.0.1]:{port} ")


def _switch(text: str | None) -> Any:
    """A transport whose REST is refused and whose console answers `text` (None: refused)."""

    def get(path: str) -> object:
        raise SwitchUnreachable(f"GET https://h/rest{path}: connection refused")

    def run(command: str) -> str:
        if text is None:
            raise SwitchUnreachable("ssh: authentication failed")
        return text

    switch = SimpleNamespace(get=get, run=run)
    return SimpleNamespace(switch_client=lambda *_: switch, switch_console=lambda *_: switch)


def test_auto_falls_back_to_ssh_and_says_why_or_names_both() -> None:
    spec = SwitchSpec(host="h", user="u", api="auto")
    access = open_access(_switch(RESOURCE_TEXT), spec)
    assert access.console is not None and access.client is None
    assert access.note == (
        "SSH console (switch.api auto: REST failed: GET https://h/rest/system/resource: "
        "connection refused)"
    )
    with pytest.raises(SwitchUnreachable) as err:
        open_access(_switch(None), spec)
    assert str(err.value) == (
        "switch.api auto: neither way reads it; REST: GET https://h/rest/system/resource: "
        "connection refused; SSH: ssh: authentication failed"
    )
