"""Labs side by side: each is its builder's while the builder runs, `down` removes only its own
lab (or a stale one), and no build (two at once neither) takes names or a subnet in use; `lab
up | status | down` from the command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import IPv4Network
from pathlib import Path

import pytest

from sparkfabric_lab import LabError, build, owner
from sparkfabric_lab.state import LabState
from sparkfabric_lab.status import status
from tests.lab import labkit

pytestmark = labkit.lab_marks()
DIRECT, SWITCH = labkit.EXAMPLES / "direct-2.yaml", str(labkit.EXAMPLES / "switch-4.yaml")

# Another run's lab: built by another process that holds it until its stdin closes.
HOLDER = """
import sys
from ipaddress import IPv4Network
from pathlib import Path
from sparkfabric_lab import build
path, lab_dir, prefix, mgmt = sys.argv[1:]
build.up(Path(path), Path(lab_dir), prefix=prefix, mgmt=IPv4Network(mgmt))
print("up", flush=True)
sys.stdin.read()
print("down", build.down(Path(lab_dir)), flush=True)
"""


@contextmanager
def _removed_at_the_end(*dirs: Path) -> Iterator[None]:
    try:
        yield
    finally:
        for d in dirs:
            if (d / "lab.json").exists():
                build.down(d, force=True)
            if d.parent.exists() and not d.exists():
                d.parent.rmdir()


def test_names_in_use_are_refused_and_down_of_a_stale_lab_leaves_the_one_beside_it(
    tmp_path: Path,
) -> None:
    """A stale lab (its builder ended: a test run killed with SIGKILL) is removed by the next
    `down`, and a stale lab.json naming namespaces and links another lab made again since
    removes nothing of it."""
    a = labkit.build(DIRECT)
    with labkit.lab_of(DIRECT) as b, _removed_at_the_end(a.dir):
        assert a.state.prefix != b.state.prefix and a.dir != b.dir
        assert not set(a.state.namespaces) & set(b.state.namespaces)
        assert a.state.mgmt != b.state.mgmt
        other = labkit.new_lab_dir()
        with pytest.raises(LabError, match="exists"):
            build.up(DIRECT, other, prefix=a.state.prefix, mgmt=labkit.free_mgmt())
        with pytest.raises(LabError, match="in use on the host"):
            build.up(DIRECT, other, prefix=labkit.unique_prefix(),
                     mgmt=IPv4Network(a.state.mgmt))  # fmt: skip
        assert not other.exists()
        other.parent.rmdir()
        labkit.intact(a.dir, a.state)
        labkit.intact(b.dir, b.state)
        sleeper = subprocess.Popen(["sleep", "60"])
        dead = owner.of(sleeper.pid)
        sleeper.kill()
        sleeper.wait()
        assert dead is not None and not owner.is_running(dead)
        a.state.set_owner(dead, "sleep 60")
        a.state.save()
        assert "held by" not in "\n".join(status(a.dir).lines)
        down = labkit.cli("down", "--dir", str(a.dir))
        assert down.returncode == 0, down.stderr
        labkit.gone(a.dir, a.state)
        labkit.intact(b.dir, b.state)
        stale = tmp_path / "stale"
        stale.mkdir()
        ghost = LabState(
            lab_dir=str(stale),
            made_dir=True,
            namespaces=list(b.state.namespaces),
            host_links=list(b.state.host_links),
            ns_ids={ns: 1 for ns in b.state.namespaces},
            link_ids={name: 1 for name in b.state.host_links},
        )
        ghost.save()
        assert build.down(stale) == []
        assert not stale.exists()
        labkit.intact(b.dir, b.state)


def test_a_live_foreign_lab_is_refused_and_force_removes_it() -> None:
    lab_dir = labkit.new_lab_dir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(DIRECT), str(lab_dir), labkit.unique_prefix(),
         str(labkit.free_mgmt())],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=labkit.REPO,
    )  # fmt: skip
    assert holder.stdin is not None and holder.stdout is not None
    with _removed_at_the_end(lab_dir):
        try:
            line = holder.stdout.readline()
            assert line == "up\n", holder.stderr.read() if holder.stderr else line
            state = LabState.load(lab_dir)
            assert state is not None and state.owner_pid == holder.pid
            refusal = (
                f"the lab in {lab_dir} belongs to running process {holder.pid} "
                f"({state.owner_cmdline[:120]}), which removes it when it ends: stop that "
                "process first, or add --force to remove the lab from under it"
            )
            with pytest.raises(LabError) as err:
                build.down(lab_dir)
            assert str(err.value) == refusal
            down = labkit.cli("down", "--dir", str(lab_dir))
            assert (down.returncode, down.stderr) == (1, f"sparkfabric lab: {refusal}\n")
            assert f"held by running process {holder.pid}" in "\n".join(status(lab_dir).lines)
            labkit.intact(lab_dir, state)
            forced = labkit.cli("down", "--dir", str(lab_dir), "--force")
            assert forced.returncode == 0, forced.stderr
            assert f"--force: removing the lab of running process {holder.pid}" in forced.stdout
            labkit.gone(lab_dir, state)
            out, _ = holder.communicate("", timeout=60)
            assert out == "down []\n" and holder.returncode == 0
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()


def test_two_ups_at_once_never_share_a_subnet_and_the_cli_reads_and_removes_the_lab() -> None:
    """Both ask for one management subnet at the same moment: one gets it, the other is told;
    the winner's lab is then read (`lab status`, a second `up`, a dead sshd) and removed."""
    dirs = [labkit.new_lab_dir(), labkit.new_lab_dir()]
    mgmt = str(labkit.free_mgmt())
    with _removed_at_the_end(*dirs):
        procs = [
            subprocess.Popen([*labkit.CLI, "up", SWITCH, "--dir", str(d), "--prefix",
                              labkit.unique_prefix(), "--mgmt", mgmt],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for d in dirs
        ]  # fmt: skip
        results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        rcs = [rc for rc, _, _ in results]
        assert sorted(rcs) == [0, 1], results
        loser_err = results[rcs.index(1)][2]
        assert f"management subnet {mgmt} is in use on the host" in loser_err
        lab_dir, up_out = dirs[rcs.index(0)], results[rcs.index(0)][1]
        assert f"pytest --cluster={lab_dir}/cluster.yaml" in up_out
        state = LabState.load(lab_dir)
        assert state is not None and state.phase == "up"
        labkit.intact(lab_dir, state)
        st = labkit.cli("status", "--dir", str(lab_dir))
        assert st.returncode == 0 and st.stdout.count("listening") == 4, st.stdout
        assert f"run: pytest --cluster={lab_dir}/cluster.yaml" in st.stdout
        again = labkit.cli("up", SWITCH, "--dir", str(lab_dir))
        assert again.returncode == 1 and "a lab is already in" in again.stderr
        os.kill(state.sshd["spark-3"], signal.SIGKILL)
        time.sleep(0.2)
        st = labkit.cli("status", "--dir", str(lab_dir))
        assert st.returncode == 1 and "spark-3: sshd" in st.stdout and "NOT RUNNING" in st.stdout
        down = labkit.cli("down", "--dir", str(lab_dir))
        assert down.returncode == 0, down.stderr
        labkit.gone(lab_dir, state)
        again = labkit.cli("down", "--dir", str(lab_dir))
        assert again.returncode == 0 and "no lab in" in again.stdout
        assert labkit.cli("status", "--dir", str(lab_dir)).returncode == 3
