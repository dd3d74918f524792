"""The POSIX sh subset the simulated nodes run (what probes send over ssh)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import sysfs
from sparkfabric_sim.sh import interp
from sparkfabric_sim.sh.grammar import parse_script
from sparkfabric_sim.transport import SSH_ROUND_TRIP_S as RTT
from tests.sim.conftest import Sim, example, with_faults


@pytest.fixture(scope="module")
def s() -> Sim:
    return Sim(example("direct-2"))


def test_quoting_variables_and_field_splitting(s: Sim) -> None:
    assert s.ok("spark-1", "x='a  b'; printf '<%s>' $x \"$x\"") == "<a><b><a  b>"
    assert s.ok("spark-1", 'echo "${HOME}/x" \\$HOME') == "/root/x $HOME\n"
    assert s.ok("spark-1", "printf '%s=%d\\n' a 1 b 2") == "a=1\nb=2\n"


def test_command_substitution_sets_the_status_of_an_assignment(s: Sim) -> None:
    script = 'if v=$(cat /nope 2>/dev/null); then echo yes; else echo no; fi; echo "[$v]"'
    assert s.ok("spark-1", script) == "no\n[]\n"
    assert s.ok("spark-1", "v=$(hostname); echo $v") == "spark-1\n"


def test_and_or_lists_pipes_and_redirections(s: Sim) -> None:
    assert s.ok("spark-1", "false && echo a || echo b") == "b\n"
    assert s.ok("spark-1", "ethtool enp1s0f1np1 | grep Speed") == "\tSpeed: 200000Mb/s\n"
    r = s.run("spark-1", "cat /nope 2>&1")
    assert r.rc == 1 and r.stdout == "cat: /nope: No such file or directory\n" and not r.stderr
    r = s.run("spark-1", "echo oops >&2")
    assert r.stdout == "" and r.stderr == "oops\n"


def test_globs_expand_against_the_node_files(s: Sim) -> None:
    out = s.ok(
        "spark-1",
        "for f in /sys/class/net/enp1s0f1np1/device/hwmon/hwmon*/temp*_input; do echo $f; done",
    )
    assert out == "/sys/class/net/enp1s0f1np1/device/hwmon/hwmon3/temp1_input\n"
    assert s.ok("spark-1", "echo /nothing/*") == "/nothing/*\n"


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
    scripts = [sysfs.build_read_files(files), sysfs.build_read_globs(globs)]
    assert all(interp._is_read_loop(parse_script(s).items[0].first.commands[0]) for s in scripts)

    def runs() -> list[tuple[object, ...]]:
        s = Sim(with_faults("direct-2", *faults))
        results = [s.run("spark-1", script, 30) for script in scripts]
        return [(r.rc, r.stdout, r.stderr, r.duration_s, r.timed_out) for r in results]

    fast = runs()
    monkeypatch.setattr(interp, "_is_read_loop", lambda node: False)
    assert fast == runs()
    assert [r[4] for r in fast] == [hang, hang]
    records = "SFREAD\tok\t/etc/hostname\tspark-1\nSFREAD\tmissing\t/nope\n"
    assert (records in str(fast[0][1])) is not hang


def test_grep_exit_status_is_gnu_grep_s(s: Sim) -> None:
    r = s.run("spark-1", "grep -H -s . /etc/hostname /nope")
    assert (r.rc, r.stdout, r.stderr) == (2, "/etc/hostname:spark-1\n", "")
    assert s.run("spark-1", "grep -H -s . /nope").rc == 2
    assert s.run("spark-1", "grep -q x /etc/hostname").rc == 1
    assert s.run("spark-1", "grep -qs spark /etc/hostname /nope").rc == 0


def test_builtins_and_not_found(s: Sim) -> None:
    assert s.ok("spark-1", "command -v ip") == "/usr/sbin/ip\n"
    assert s.run("spark-1", "command -v nosuchtool").rc == 127
    r = s.run("spark-1", "nosuchtool --x")
    assert (r.rc, r.stderr) == (127, "sh: 1: nosuchtool: not found\n")
    assert s.run("spark-1", "test -d /sys/class/net && test -f /etc/hostname").rc == 0
    assert s.run("spark-1", "[ -e /nope ]").rc == 1
    assert s.run("spark-1", "printenv NOPE").rc == 1
    assert s.ok("spark-1", "FOO=bar printenv FOO") == "bar\n"
    assert s.run("spark-1", "if then").rc == 2


def test_wrappers_sudo_sh_env_timeout(s: Sim) -> None:
    assert s.ok("spark-1", "sudo -n sh -c 'hostname; uname -s'") == "spark-1\nLinux\n"
    assert s.ok("spark-1", "env A=1 printenv A") == "1\n"
    r = s.run("spark-1", "timeout 2 sleep 10")
    assert (r.rc, r.duration_s) == (124, 2.0 + RTT)
    assert s.run("spark-1", "timeout 20 sleep 10").duration_s == 10.0 + RTT
    assert s.ok("spark-1", "cat ~/.nccl.conf 2>/dev/null || echo none") == "none\n"
