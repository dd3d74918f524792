"""The switch's console over OpenSSH: read-only before anything leaves, a deadline that closes
the session, ssh's failures as lines an operator can act on, the password never on a command
line; and the console recorded and replayed like the REST calls."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from pytest_sparkfabric.cluster.spec import SwitchSpec
from pytest_sparkfabric.measure.switch_access import ConsoleReads, open_access
from pytest_sparkfabric.probes.routeros_commands import RESOURCE, switch_reads
from pytest_sparkfabric.transport.record import RecordingTransport, ReplayTransport
from pytest_sparkfabric.transport.recording_files import SWITCH_SSH_RECORDING, check_recording
from pytest_sparkfabric.transport.switch import SwitchError, SwitchUnreachable
from pytest_sparkfabric.transport.switch_ssh import SshConsole, ssh_console

RESOURCE_TEXT = "                 cpu-load: 7%\n               board-name: CRS804-4DDQ\n"


def _fake_ssh(tmp: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """An `ssh` first on PATH that logs its argv to tmp/argv and then runs `body`."""
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "ssh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp}/argv"\n{body}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tmp / "argv"


def test_a_read_runs_one_command_as_user_plus_ct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = _fake_ssh(tmp_path, monkeypatch, f"printf '{RESOURCE_TEXT}'")
    console = SshConsole("10.0.0.2", "ro", port=2222, identity_file="~/k")
    reads = ConsoleReads(console)
    assert reads.resource().cpu_load_pct == 7
    argv = argv_file.read_text().splitlines()
    assert argv[-3:] == ["--", "10.0.0.2", RESOURCE]
    assert argv[argv.index("-l") : argv.index("-l") + 2] == ["-l", "ro+ct"]
    assert argv[argv.index("-p") : argv.index("-p") + 2] == ["-p", "2222"]
    assert "BatchMode=yes" in argv and "ControlMaster=no" in argv
    assert os.path.expanduser("~/k") in argv


@pytest.mark.parametrize(
    "command",
    [
        "/interface ethernet set qsfp56-dd-1-1 mtu=1500",
        "/system reboot",
        "/interface ethernet monitor qsfp56-dd-1-1",  # never ends without `once`
        "/system resource print; /system reboot",
        "/export file=x",
    ],
)
def test_anything_but_a_read_is_refused_before_it_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    argv_file = _fake_ssh(tmp_path, monkeypatch, "")
    with pytest.raises(SwitchError, match=r"refused to send .* the suite only reads"):
        SshConsole("10.0.0.2", "ro").run(command)
    assert not argv_file.exists()


def test_every_read_of_a_pass_is_allowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ssh(tmp_path, monkeypatch, "")
    console = SshConsole("10.0.0.2", "ro")
    for read in switch_reads(["qsfp56-dd-1-1", "qsfp56-dd-1-5"]):
        assert console.run(read.command) == ""


def test_the_deadline_closes_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ssh(tmp_path, monkeypatch, "sleep 30")
    t0 = time.monotonic()
    with pytest.raises(SwitchError, match=r"no answer within 1 s; the session was closed"):
        SshConsole("10.0.0.2", "ro", timeout_s=1).run(RESOURCE)
    assert time.monotonic() - t0 < 10


@pytest.mark.parametrize(
    ("stderr", "says"),
    [
        ("ro@10.0.0.2: Permission denied (publickey,password).", "/user/ssh-keys/import"),
        ("ssh: connect to host 10.0.0.2 port 22: Connection refused", "enable the ssh service"),
        ("Host key verification failed.", "known_hosts"),
    ],
)
def test_ssh_failures_say_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: str, says: str
) -> None:
    _fake_ssh(tmp_path, monkeypatch, f"echo '{stderr}' >&2; exit 255")
    with pytest.raises(SwitchUnreachable) as err:
        SshConsole("10.0.0.2", "ro").run(RESOURCE)
    assert says in str(err.value) and str(err.value).startswith("ssh ro+ct@10.0.0.2:22 ")


def test_the_password_goes_by_askpass_never_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = _fake_ssh(tmp_path, monkeypatch, 'echo "cpu-load: $("$SSH_ASKPASS")"')
    monkeypatch.setenv("SWPW", "s3cret%1")
    spec = SwitchSpec(host="10.0.0.2", user="ro", password_env="SWPW", api="ssh")
    console = ssh_console(spec)
    assert console.run(RESOURCE).strip() == "cpu-load: s3cret%1"
    argv = argv_file.read_text()
    assert "s3cret" not in argv and "BatchMode=no" in argv


def test_a_password_variable_not_set_says_so() -> None:
    spec = SwitchSpec(host="10.0.0.2", user="ro", password_env="SF_UNSET_VAR_X", api="ssh")
    with pytest.raises(SwitchUnreachable, match=r"\$SF_UNSET_VAR_X .* switch.identity_file"):
        ssh_console(spec)


def test_ports_per_api() -> None:
    assert ssh_console(SwitchSpec(host="h", user="u", api="ssh", api_port=2200)).port == 2200
    auto = SwitchSpec(host="h", user="u", api="auto", api_port=8443, ssh_port=2201)
    assert ssh_console(auto).port == 2201
    assert ssh_console(SwitchSpec(host="h", user="u", api="auto")).port == 22


# -- recorded and replayed ----------------------------------------------------------------------


def test_console_recording_replays(tmp_path: Path) -> None:
    from sparkfabric_sim.transport import SimTransport
    from tests.sim.conftest import example

    cluster = example("demo")
    spec = cluster.spec.switch
    assert spec is not None
    rec = RecordingTransport(SimTransport(cluster), tmp_path / "rec")
    console = rec.switch_console(spec)
    legs = list(spec.ports.values())
    first = [console.run(r.command) for r in switch_reads(legs)]
    assert (tmp_path / "rec" / SWITCH_SSH_RECORDING).is_file()
    check_recording(tmp_path / "rec")
    replay = ReplayTransport(tmp_path / "rec").switch_console(spec)
    assert [replay.run(r.command) for r in switch_reads(legs)] == first
    with pytest.raises(SwitchUnreachable, match="no recording of `/system routerboard print`"):
        replay.run("/system routerboard print")


# -- auto ---------------------------------------------------------------------------------------


class _Refused:
    def get(self, path: str) -> object:
        raise SwitchUnreachable("GET https://h/rest/system/resource: connection refused")

    def post(self, path: str, body: object) -> object:
        raise SwitchUnreachable("connection refused")


class _Console:
    def __init__(self, text: str | None) -> None:
        self.text = text

    def run(self, command: str) -> str:
        if self.text is None:
            raise SwitchUnreachable("ssh: authentication failed")
        return self.text


class _Transport:
    def __init__(self, console: _Console) -> None:
        self.console = console

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> _Refused:
        return _Refused()

    def switch_console(self, spec: SwitchSpec, base_dir: Path | None = None) -> _Console:
        return self.console


def test_auto_falls_back_to_ssh_and_says_why() -> None:
    spec = SwitchSpec(host="h", user="u", api="auto")
    access = open_access(_Transport(_Console(RESOURCE_TEXT)), spec)  # type: ignore[arg-type]
    assert access.reads.api == "ssh"
    assert access.note == (
        "SSH console (switch.api auto: REST failed: GET https://h/rest/system/resource: "
        "connection refused)"
    )


def test_auto_with_neither_way_names_both() -> None:
    spec = SwitchSpec(host="h", user="u", api="auto")
    with pytest.raises(
        SwitchUnreachable, match=r"REST: .*connection refused; SSH: .*authentication"
    ):
        open_access(_Transport(_Console(None)), spec)  # type: ignore[arg-type]
