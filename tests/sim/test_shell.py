"""The POSIX sh subset the simulated nodes run (what probes send over ssh)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import sysfs
from sparkfabric_sim.sh import interp
from sparkfabric_sim.sh.grammar import parse_script
from sparkfabric_sim.transport import SSH_ROUND_TRIP_S as RTT
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import run, sim


@pytest.fixture(scope="module")
def t() -> SimTransport:
    return sim()


# script, its exit status, its stdout (the stderr where a third item is given)
SCRIPTS = [
    ("x='a  b'; printf '<%s>' $x \"$x\"", 0, "<a><b><a  b>"),
    ('echo "${HOME}/x" \\$HOME', 0, "/root/x $HOME\n"),
    ("printf '%s=%d\\n' a 1 b 2", 0, "a=1\nb=2\n"),
    # a command substitution sets the status of an assignment
    ('if v=$(cat /nope 2>/dev/null); then echo yes; else echo no; fi; echo "[$v]"', 0, "no\n[]\n"),
    ("v=$(hostname); echo $v", 0, "spark-1\n"),
    ("false && echo a || echo b", 0, "b\n"),
    ("ethtool enp1s0f1np1 | grep Speed", 0, "\tSpeed: 200000Mb/s\n"),
    ("cat /nope 2>&1", 1, "cat: /nope: No such file or directory\n", ""),
    ("echo oops >&2", 0, "", "oops\n"),
    # globs expand against the node's files
    ("for f in /sys/class/net/enp1s0f1np1/device/hwmon/hwmon*/temp*_input; do echo $f; done", 0,
     "/sys/class/net/enp1s0f1np1/device/hwmon/hwmon3/temp1_input\n"),
    ("echo /nothing/*", 0, "/nothing/*\n"),
    # GNU grep's exit status
    ("grep -H -s . /etc/hostname /nope", 2, "/etc/hostname:spark-1\n", ""),
    ("grep -H -s . /nope", 2, ""),
    ("grep -q x /etc/hostname", 1, ""),
    ("grep -qs spark /etc/hostname /nope", 0, ""),
    # builtins, not found, wrappers
    ("command -v ip", 0, "/usr/sbin/ip\n"),
    ("command -v nosuchtool", 127, ""),
    ("nosuchtool --x", 127, "", "sh: 1: nosuchtool: not found\n"),
    ("test -d /sys/class/net && test -f /etc/hostname", 0, ""),
    ("[ -e /nope ]", 1, ""),
    ("printenv NOPE", 1, ""),
    ("FOO=bar printenv FOO", 0, "bar\n"),
    ("if then", 2, ""),
    ("sudo -n sh -c 'hostname; uname -s'", 0, "spark-1\nLinux\n"),
    ("env A=1 printenv A", 0, "1\n"),
    ("cat ~/.nccl.conf 2>/dev/null || echo none", 0, "none\n"),
]  # fmt: skip


@pytest.mark.parametrize("case", SCRIPTS, ids=[c[0] for c in SCRIPTS])
def test_a_script_prints_and_exits_as_sh_does(t: SimTransport, case: tuple[object, ...]) -> None:
    script, rc, stdout, *stderr = case
    r = run(t, "spark-1", str(script))
    assert (r.rc, r.stdout, *([r.stderr] if stderr else [])) == (rc, stdout, *stderr)


def test_timeout_ends_a_command_at_its_limit(t: SimTransport) -> None:
    r = run(t, "spark-1", "timeout 2 sleep 10")
    assert (r.rc, r.duration_s) == (124, 2.0 + RTT)
    assert run(t, "spark-1", "timeout 20 sleep 10").duration_s == 10.0 + RTT


@pytest.mark.parametrize("hang", [False, True])
def test_the_sysfs_loop_run_at_once_prints_what_the_interpreted_loop_prints(
    hang: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The product's read loops (files, globs; a missing file, a folder, a glob matching
    nothing) and a `cat` that hangs: the same records, status, time and timeout as the loop
    interpreted file by file."""
    faults = ["{fault: command_hangs, command: cat, node: spark-1}"] if hang else []
    files = ["/etc/hostname", "/nope", "/sys/class/net", "/proc/sys/net/ipv4/conf/all/rp_filter"]
    globs = ["/sys/class/infiniband/*/ports/1/state", "/nothing/*"]
    scripts = [sysfs.build_read_files(files), sysfs.build_read_files(globs, expand=True)]
    assert all(interp._is_read_loop(parse_script(s).items[0].first.commands[0]) for s in scripts)

    def runs() -> list[tuple[object, ...]]:
        t = sim("direct-2", *faults)
        results = [run(t, "spark-1", script, 30) for script in scripts]
        return [(r.rc, r.stdout, r.stderr, r.duration_s, r.timed_out) for r in results]

    fast = runs()
    monkeypatch.setattr(interp, "_is_read_loop", lambda node: False)
    assert fast == runs()
    assert [r[4] for r in fast] == [hang, hang]
    records = "SFREAD\tok\t/etc/hostname\tspark-1\nSFREAD\tmissing\t/nope\n"
    assert (records in str(fast[0][1])) is not hang
