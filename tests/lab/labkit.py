"""Helpers of the lab tests: build and remove labs, look into their namespaces, run suites."""

from __future__ import annotations

import contextlib
import json
import random
import re
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_sparkfabric.cluster import Cluster, load_cluster
from pytest_sparkfabric.probes import sysfs
from pytest_sparkfabric.transport import Job, Transport, make_transport
from sparkfabric_lab import LabError, host
from sparkfabric_lab.build import down, up
from sparkfabric_lab.state import LabState
from sparkfabric_lab.status import status
from tests.suite.runner import SuiteRun, write_cluster

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "lab"
# Lab dirs live here, not under pytest's basetemp: other pytest runs on the machine prune old
# basetemps, and a lab whose lab.json vanished could not be taken down.
LAB_ROOT = Path("/run/sparkfabric-lab-tests")
CLI = [sys.executable, "-m", "sparkfabric_lab.cli"]
# What the kernel answers in the lab (no simulated tool involved): addresses, sysctls, MTU and
# DF pings, NCCL config files and the sysfs reads of the links module; test_link asks ethtool
# (the suite's node ids do not say where it lies: a name, not a path).
T = TypeVar("T")
KERNEL = ["-m", "addressing or ipv6 or mtu or nccl_env or links", "-k", "not test_link["]


def lab_marks() -> list[pytest.MarkDecorator]:
    reason = host.why_not_root() or host.why_no_netns() or host.why_no_sshd()
    skip = pytest.mark.skipif(reason is not None, reason=str(reason))
    return [pytest.mark.lab, pytest.mark.slow, skip]


def unique_prefix() -> str:
    """`t` + 4 random characters: labs of test runs side by side (other sessions too) never
    share a namespace name."""
    return "t" + "".join(random.choices(string.digits + string.ascii_lowercase, k=4)) + "-"


def free_mgmt() -> IPv4Network:
    used = [a.network for _, a in host.host_ipv4()]
    start = random.randrange(120)
    for k in range(120):
        net = IPv4Network(f"198.18.{100 + (start + k) % 120}.0/24")
        if not any(net.overlaps(u) for u in used):
            return net
    raise RuntimeError("no free management /24 in 198.18.100-219")


def cluster_file(tmp: Path, example: str, *, faults: Sequence[Mapping[str, Any]] = ()) -> Path:
    """A lab example (examples/lab) with these faults, written to `tmp`."""
    faulted = [dict(f) for f in faults] or None
    return write_cluster(tmp, f"lab/{example}.yaml", faults=faulted, name=f"{example}.yaml")


@dataclass
class Lab:
    dir: Path
    state: LabState
    cluster: Cluster

    @property
    def cluster_yaml(self) -> Path:
        return self.dir / "cluster.yaml"

    def transport(self) -> Transport:
        return make_transport(self.cluster)

    def ssh_error(self, node: str) -> str | None:
        """What a fresh transport's `true` on the node fails with over ssh."""
        t = self.transport()
        try:
            return t.run(Job(node, "true", 5)).transport_error
        finally:
            t.close()

    def in_node(self, node: str, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Run a command in the node's own namespaces (network and mount: its /etc, its /sys)."""
        argv = ["nsenter", "-t", str(self.state.sshd[node]), "-m", "-n", *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)

    def stray_processes(self) -> dict[str, list[str]]:
        """Every process in the lab's namespaces but the lab's own (the sshd listeners, the
        resident simulator): ns -> ['pid cmdline', ...]."""
        own = {*self.state.sshd.values(), self.state.resident_pid}
        out: dict[str, list[str]] = {}
        for ns in self.state.namespaces:
            for pid in host.ns_pids(ns):
                if pid not in own and (cmd := host.proc_cmdline(pid).strip()):
                    out.setdefault(ns, []).append(f"{pid} {cmd}")
        return out


def new_lab_dir() -> Path:
    for _ in range(3):
        LAB_ROOT.mkdir(mode=0o700, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):  # another run removed LAB_ROOT just now
            return Path(tempfile.mkdtemp(prefix="lab-", dir=LAB_ROOT)) / "lab"
    raise RuntimeError(f"cannot make a lab dir in {LAB_ROOT}")


def build(path: Path) -> Lab:
    lab_dir = new_lab_dir()
    for attempt in range(3):
        try:
            state = up(path, lab_dir, prefix=unique_prefix(), mgmt=free_mgmt())
            break
        except LabError as err:
            # Another run took the prefix or the subnet between our pick and our build (up
            # checks under a host-wide lock, so it noticed): pick again.
            if attempt == 2 or not str(err).startswith("cannot build the lab:"):
                raise
    return Lab(lab_dir, state, load_cluster(lab_dir / "cluster.yaml"))


def take_down(lab: Lab) -> list[str]:
    """`down`'s problems and what is left of the lab after it."""
    problems = down(lab.dir, state=lab.state)
    for d in (lab.dir.parent, LAB_ROOT):  # LAB_ROOT only when no lab (of any run) is left in it
        with contextlib.suppress(OSError):
            d.rmdir()
    problems += [f"netns {ns}" for ns in lab.state.namespaces if host.netns_exists(ns)]
    problems += [f"link {n}" for n in lab.state.host_links if host.link_exists(n)]
    return problems + ([f"file {p}" for p in lab.dir.iterdir()] if lab.dir.exists() else [])


@contextmanager
def lab_of(path: Path) -> Iterator[Lab]:
    lab = build(path)
    try:
        yield lab
    finally:
        problems = take_down(lab)
        assert not problems, problems


@contextmanager
def labs_running(
    paths: Mapping[str, Path], go: Callable[[str, Lab], T], workers: int
) -> Iterator[dict[str, T]]:
    """A lab per path (built one after the other), `go` run on all of them at once; the labs
    are taken down at the end."""
    with ExitStack() as stack:
        labs = {name: stack.enter_context(lab_of(path)) for name, path in paths.items()}
        with ThreadPoolExecutor(workers) as pool:
            futures = {name: pool.submit(go, name, lab) for name, lab in labs.items()}
            yield {name: f.result() for name, f in futures.items()}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`sparkfabric lab ARGS` in a process of its own."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, check=False)


def intact(lab_dir: Path, state: LabState) -> None:
    assert all(host.netns_exists(ns) for ns in state.namespaces)
    assert all(host.link_exists(name) for name in state.host_links)
    st = status(lab_dir)
    assert st.rc == 0, st.lines


def gone(lab_dir: Path, state: LabState) -> None:
    assert not any(host.netns_exists(ns) for ns in state.namespaces)
    assert not any(host.link_exists(name) for name in state.host_links)
    assert not lab_dir.exists()


# -- running a suite ------------------------------------------------------------------------------


def pytest_argv(cluster_yaml: Path, extra: Sequence[str] = ()) -> list[str]:
    # `--cluster=PATH` as one word: a separate PATH would count in pytest's rootdir choice.
    return [sys.executable, "-m", "pytest", f"--cluster={cluster_yaml}",
            "-p", "no:cacheprovider", "-p", "no:randomly", *extra]  # fmt: skip


def run_suite(
    cluster_yaml: Path, out: Path, selection: Sequence[str], *, extra: Sequence[str] = ()
) -> SuiteRun:
    """Run the shipped suite over a lab; the outcome of every test (from --sparkfabric-json,
    not measured as failed).

    The timeout only catches a run that hangs (every command in it has its own deadline): it is
    sized for four labs at once on a busy 2-core machine, not for an idle one."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    argv = pytest_argv(cluster_yaml, [*selection, "--sparkfabric-json", str(results), *extra])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=1200, cwd=REPO, check=False)
    # ACCEPTED 0, REJECTED 1, INCOMPLETE 10 (a hung tool: not measured)
    assert r.returncode in (0, 1, 10), f"pytest rc {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr}"
    return SuiteRun.of(r.returncode, r.stdout, json.loads(results.read_text()))


# -- what a run may not change or leave -----------------------------------------------------------


def snapshot(lab: Lab) -> dict[str, dict[str, str]]:
    """Per node: `ip -j addr`, `ip -j link`, the fabric sysctls and /etc/nccl.conf, read in the
    node's own namespaces (not through the suite's ssh)."""
    out: dict[str, dict[str, str]] = {}
    for node in lab.cluster.nodes:
        if node.name not in lab.state.sshd:
            continue  # no sshd, no mount namespace to look into (fault node_unreachable)
        paths = sorted({p for r in node.rails for p in sysfs.sysctl_paths(r.netdev).values()})
        reads = "; ".join(f"echo {p}=$(cat {p})" for p in paths)
        script = f"ip -j addr show; echo @@; ip -j link show; echo @@; {reads}; echo @@; "
        r = lab.in_node(node.name, ["sh", "-c", script + "cat /etc/nccl.conf"])
        assert r.returncode == 0, r.stderr
        addr, link, sysctls, conf = r.stdout.split("@@\n")
        out[node.name] = {
            "ip -j addr": json.dumps(json.loads(addr), sort_keys=True),
            "ip -j link": json.dumps(json.loads(link), sort_keys=True),
            "sysctls": sysctls,
            "/etc/nccl.conf": conf,
        }
    return out


def strays_after(lab: Lab, grace_s: float = 10.0) -> dict[str, list[str]]:
    """Processes left in the lab's namespaces once a run is over (sshd gets `grace_s` to reap
    its sessions)."""
    deadline = time.monotonic() + grace_s
    while (left := lab.stray_processes()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def who_holds(lab: Lab) -> str:
    """The host processes with a connection to a lab node's sshd (to explain a stray session)."""
    ips = set(lab.state.mgmt_ips.values())
    r = subprocess.run(["ss", "-Htnp", "state", "established"], capture_output=True, text=True,
                       check=False)  # fmt: skip
    return "\n".join(
        f"{ln.split()[-2]} <- pid {pid}: {host.proc_cmdline(int(pid))[:200]}"
        for ln in r.stdout.splitlines()
        if any(f"{ip}:22 " in ln + " " for ip in ips)
        for pid in re.findall(r"pid=(\d+)", ln)
    )
