"""A healthy lab of each topology, side by side, reached as the plugin reaches a cluster (real
ssh): the shipped suite runs over all four at once (its TCP items: real iperf3 between the
namespaces), recording, and the recordings replay. Each run must pass, change nothing on any
node, and leave no process behind."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from pytest_sparkfabric.probes.ip import parse_ip_addr_json
from pytest_sparkfabric.transport import Job, Transport
from sparkfabric_lab.status import status
from tests.lab import labkit
from tests.suite.runner import SuiteRun

pytestmark = labkit.lab_marks()
TOPOS = ("direct-2", "mesh-3", "ring-4", "switch-4")
REPLAYED = ("direct-2", "switch-4")  # a replay per L2 style is enough (and saves CPU)
NO_SOAK = ["-m", "not soak"]


@pytest.fixture(scope="module")
def labs() -> Iterator[dict[str, labkit.Lab]]:
    with ExitStack() as stack:
        yield {t: stack.enter_context(labkit.lab_of(labkit.EXAMPLES / f"{t}.yaml")) for t in TOPOS}


@pytest.fixture(scope="module")
def transports(labs: dict[str, labkit.Lab]) -> Iterator[dict[str, Transport]]:
    ts = {topo: lab.transport() for topo, lab in labs.items()}
    yield ts
    for t in ts.values():
        t.close()


EACH = pytest.mark.parametrize("topo", TOPOS)


@dataclass
class Runs:
    real: list[SuiteRun]
    replay: SuiteRun | None
    before: dict[str, dict[str, str]]
    after: dict[str, dict[str, str]] = field(default_factory=dict)
    strays: dict[str, list[str]] = field(default_factory=dict)
    holders: str = ""

    def look(self, lab: labkit.Lab) -> None:
        """Note what the run left (sshd gets a grace to reap its sessions)."""
        if strays := labkit.strays_after(lab):
            self.strays.update(strays)
            self.holders += labkit.who_holds(lab)


def _main_run(lab: labkit.Lab, out: Path, replay: bool) -> Runs:
    """The suite but its soak, recorded; the recording replayed."""
    before, rec = labkit.snapshot(lab), out / "recording"
    real = labkit.run_suite(lab.cluster_yaml, out / "real", NO_SOAK,
                            extra=["--sparkfabric-record", str(rec)])  # fmt: skip
    runs = Runs([real], None, before)
    runs.look(lab)
    if replay:
        data = yaml.safe_load(lab.cluster_yaml.read_text())
        data.update(transport="replay", replay_dir=str(rec))
        (out / "replay.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        runs.replay = labkit.run_suite(out / "replay.yaml", out / "replay", NO_SOAK)
    return runs


def _soak_run(lab: labkit.Lab, out: Path, runs: Runs) -> None:
    """The soak on its own (it is the heaviest part for the simulator), then the after-look."""
    runs.real.append(labkit.run_suite(lab.cluster_yaml, out / "soak", ["-m", "soak"]))
    runs.look(lab)
    runs.after = labkit.snapshot(lab)


@pytest.fixture(scope="module")
def runs(
    labs: dict[str, labkit.Lab],
    transports: dict[str, Transport],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Runs]:
    """All four labs at once for the main part; the soaks two at a time."""
    for t in transports.values():
        t.close()  # this module's own ssh sessions are not the run's to answer for
    outs = {topo: tmp_path_factory.mktemp(f"run-{topo}") for topo in labs}
    with ThreadPoolExecutor(len(labs)) as pool:
        futures = {t: pool.submit(_main_run, labs[t], outs[t], t in REPLAYED) for t in labs}
        done = {topo: f.result() for topo, f in futures.items()}
    with ThreadPoolExecutor(2) as pool:
        for f in [pool.submit(_soak_run, labs[t], outs[t], done[t]) for t in labs]:
            f.result()
    return done


# -- the lab as built --


@EACH
def test_the_lab_is_as_planned(
    labs: dict[str, labkit.Lab], transports: dict[str, Transport], topo: str
) -> None:
    lab, transport = labs[topo], transports[topo]
    st = status(lab.dir)
    assert st.rc == 0, st.lines
    assert sum("listening" in line for line in st.lines) == len(lab.cluster.nodes)
    c = lab.cluster
    results = transport.run_many([Job(n.name, "ip -j addr show; cat /etc/nccl.conf", 20)
                                  for n in c.nodes])  # fmt: skip
    for node, r in zip(c.nodes, results, strict=True):
        assert r.ok, r.failure() or r.stderr
        addr, conf = r.stdout.split("\n", 1)
        assert f"lab node {node.name}" in conf  # each node has its own /etc/nccl.conf
        ifaces = {i.name: i for i in parse_ip_addr_json(addr)}
        assert set(ifaces) == {"lo", "enP7s7", *(rail.netdev for rail in node.rails)}
        for rail in node.rails:
            iface = ifaces[rail.netdev]
            assert iface.ipv4 == (rail.address,) and iface.ipv6 == ()
            assert iface.mtu_bytes == c.mtu and iface.admin_up and iface.carrier
    host_conf = Path("/etc/nccl.conf")
    assert not host_conf.exists() or "sparkfabric lab" not in host_conf.read_text()


def test_only_cabled_nodes_reach_each_other(
    labs: dict[str, labkit.Lab], transports: dict[str, Transport]
) -> None:
    one, three = labs["ring-4"].cluster.nodes[0], labs["ring-4"].cluster.nodes[2]
    r = transports["ring-4"].run(Job(one.name, f"ping -c 1 -W 1 {three.rails[0].address.ip}", 10))
    assert r.rc != 0, "spark-1 reached spark-3 although no cable joins them"


@EACH
def test_hardware_tools_are_wrappers_and_kernel_tools_are_real(
    labs: dict[str, labkit.Lab], transports: dict[str, Transport], topo: str
) -> None:
    lab, transport = labs[topo], transports[topo]
    node = lab.cluster.nodes[0].name
    tools = "ethtool ib_write_bw mpirun nvidia-smi gpu_burn ip ping iperf3 timeout"
    r = transport.run(Job(node, f"for t in {tools}; do command -v $t; done", 10))
    wrappers = str(lab.dir / "bin" / node)
    paths = r.stdout.split()
    assert [p.startswith(wrappers) for p in paths] == [True] * 5 + [False] * 4, paths
    # The node's shell is stock: no rc file of this machine put its PATH before the lab's.
    assert transport.run(Job(node, "echo $PATH", 10)).stdout.startswith(wrappers + ":")
    body = (lab.dir / "bin" / node / "ethtool").read_text()
    assert f"toolcall.py {lab.dir}/sim.sock {node} -- " in body  # the resident answers


# -- the shipped suite over ssh --


@EACH
def test_shipped_suite_passes_changes_nothing_and_leaves_no_process(
    runs: dict[str, Runs], topo: str
) -> None:
    for run in runs[topo].real:
        assert run.outcomes, run.stdout[-2000:]
        assert not run.failed, run.failures()
    main = runs[topo].real[0].outcomes  # iperf3 between the namespaces, real (not the soak run)
    assert {v for k, v in main.items() if k.startswith("test_pair_tcp[")} == {"passed"}, main
    before, after = runs[topo].before, runs[topo].after
    assert before.keys() == after.keys()
    for node, seen in before.items():
        for what, value in seen.items():
            assert after[node][what] == value, f"{node}: {what} changed during the run"
    strays = runs[topo].strays
    masters = any("root@notty" in p for ps in strays.values() for p in ps)
    hint = "an sshd session with no command: a ControlMaster connection the run left open"
    assert strays == {}, (hint if masters else "") + "\n" + runs[topo].holders


@pytest.mark.parametrize("replayed", REPLAYED)
def test_replay_reproduces_the_verdicts(runs: dict[str, Runs], replayed: str) -> None:
    replay = runs[replayed].replay
    assert replay is not None
    assert replay.outcomes == runs[replayed].real[0].outcomes
