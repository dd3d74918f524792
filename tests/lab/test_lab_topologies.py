"""A healthy lab of each topology, reached the way the plugin reaches a cluster: real ssh (its DF
pings at the MTU and its sysfs as a Spark's are the shipped suite's to prove, passing below).

The four labs stand side by side (each its own prefix and management subnet) and the shipped
suite runs over all of them at once, recording; the recordings are then replayed. Each run
must pass, change nothing on any node, and leave no process behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from pytest_sparkfabric.cluster.plan import plan
from pytest_sparkfabric.measure.flows import wait_listening
from pytest_sparkfabric.probes.ip import parse_ip_addr_json
from pytest_sparkfabric.transport import Job, Transport
from sparkfabric_lab.status import status
from tests.lab import labkit

pytestmark = labkit.lab_marks()
TOPOLOGIES = ("direct-2", "mesh-3", "ring-4", "switch-4")
REPLAYED = ("direct-2", "switch-4")  # a replay per L2 style is enough (and saves CPU)


@pytest.fixture(scope="module")
def labs() -> Iterator[dict[str, labkit.Lab]]:
    with ExitStack() as stack:
        out = {}
        for topo in TOPOLOGIES:
            out[topo] = stack.enter_context(labkit.lab_of(labkit.EXAMPLES / f"{topo}.yaml"))
        yield out


@pytest.fixture(scope="module")
def transports(labs: dict[str, labkit.Lab]) -> Iterator[dict[str, Transport]]:
    ts = {topo: lab.transport() for topo, lab in labs.items()}
    yield ts
    for t in ts.values():
        t.close()


@pytest.fixture(params=TOPOLOGIES)
def topo(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def lab(labs: dict[str, labkit.Lab], topo: str) -> labkit.Lab:
    return labs[topo]


@pytest.fixture
def transport(transports: dict[str, Transport], topo: str) -> Transport:
    return transports[topo]


@dataclass
class Runs:
    real: list[labkit.SuiteRun]
    replay: labkit.SuiteRun | None
    before: dict[str, dict[str, str]]
    after: dict[str, dict[str, str]]
    strays: dict[str, list[str]]
    holders: str = ""


def _main_run(lab: labkit.Lab, out: Path, replay: bool) -> Runs:
    """The suite but its soak, recorded; the recording replayed."""
    selection = list(labkit.NO_SOAK)
    before = labkit.snapshot(lab)
    rec = out / "recording"
    real = labkit.run_suite(lab.cluster_yaml, out / "real", selection,
                            extra=["--sparkfabric-record", str(rec)])  # fmt: skip
    strays = labkit.strays_after(lab)
    holders = labkit.who_holds(lab) if strays else ""
    replayed = None
    if replay:
        data = yaml.safe_load(lab.cluster_yaml.read_text())
        data.update(transport="replay", replay_dir=str(rec))
        replay_yaml = out / "replay.yaml"
        replay_yaml.write_text(yaml.safe_dump(data, sort_keys=False))
        replayed = labkit.run_suite(replay_yaml, out / "replay", selection)
    return Runs([real], replayed, before, {}, strays, holders)


def _soak_run(lab: labkit.Lab, out: Path, runs: Runs) -> None:
    """The soak on its own (it is the heaviest part for the simulator), then the after-look."""
    soak = labkit.run_suite(lab.cluster_yaml, out / "soak", ["-m", "soak"])
    runs.real.append(soak)
    strays = labkit.strays_after(lab)
    if strays:
        runs.strays.update(strays)
        runs.holders += labkit.who_holds(lab)
    runs.after = labkit.snapshot(lab)


@pytest.fixture(scope="module")
def runs(
    labs: dict[str, labkit.Lab],
    transports: dict[str, Transport],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Runs]:
    """All four labs at once for the main part; the soaks two at a time."""
    if labkit.shipped_suite() is None:
        pytest.skip("acceptance/ has no tests yet")
    for t in transports.values():
        t.close()  # this module's own ssh sessions are not the run's to answer for
    outs = {topo: tmp_path_factory.mktemp(f"run-{topo}") for topo in labs}
    with ThreadPoolExecutor(len(labs)) as pool:
        futures = {
            topo: pool.submit(_main_run, lab, outs[topo], topo in REPLAYED)
            for topo, lab in labs.items()
        }
        done = {topo: f.result() for topo, f in futures.items()}
    with ThreadPoolExecutor(2) as pool:
        for f in [pool.submit(_soak_run, labs[t], outs[t], done[t]) for t in labs]:
            f.result()
    return done


# -- the lab as built --


def test_status_says_up(lab: labkit.Lab) -> None:
    st = status(lab.dir)
    assert st.rc == 0, st.lines
    assert sum("listening" in line for line in st.lines) == len(lab.cluster.nodes)


def test_interfaces_are_as_planned(lab: labkit.Lab, transport: Transport) -> None:
    c = lab.cluster
    results = transport.run_many([Job(n.name, "ip -j addr show", 20) for n in c.nodes])
    for node, r in zip(c.nodes, results, strict=True):
        assert r.ok, r.failure() or r.stderr
        ifaces = {i.name: i for i in parse_ip_addr_json(r.stdout)}
        assert set(ifaces) == {"lo", "enP7s7", *(rail.netdev for rail in node.rails)}
        for rail in node.rails:
            iface = ifaces[rail.netdev]
            assert iface.ipv4 == (rail.address,)
            assert iface.mtu_bytes == c.mtu
            assert iface.admin_up and iface.carrier
            assert iface.ipv6 == ()


def test_only_cabled_nodes_reach_each_other(lab: labkit.Lab, transport: Transport) -> None:
    if lab.cluster.topology != "ring":
        pytest.skip("only a ring has node pairs without a cable")
    one, three = lab.cluster.nodes[0], lab.cluster.nodes[2]
    r = transport.run(Job(one.name, f"ping -c 1 -W 1 {three.rails[0].address.ip}", 10))
    assert r.rc != 0, "spark-1 reached spark-3 although no cable joins them"


def test_each_node_has_its_own_nccl_conf(lab: labkit.Lab, transport: Transport) -> None:
    for node in lab.cluster.nodes:
        r = transport.run(Job(node.name, "cat /etc/nccl.conf", 10))
        assert r.ok and f"lab node {node.name}" in r.stdout
    host_conf = Path("/etc/nccl.conf")
    assert not host_conf.exists() or "sparkfabric lab" not in host_conf.read_text()


def test_hardware_tools_are_wrappers_and_kernel_tools_are_real(
    lab: labkit.Lab, transport: Transport
) -> None:
    node = lab.cluster.nodes[0].name
    tools = "ethtool ib_write_bw mpirun nvidia-smi gpu_burn ip ping iperf3 timeout"
    r = transport.run(Job(node, f"for t in {tools}; do command -v $t; done", 10))
    paths = r.stdout.split()
    wrappers = str(lab.dir / "bin" / node)
    assert [p.startswith(wrappers) for p in paths] == [True] * 5 + [False] * 4, paths
    # The node's shell is stock: no rc file of this machine put its PATH before the lab's.
    assert transport.run(Job(node, "echo $PATH", 10)).stdout.startswith(wrappers + ":")
    body = (lab.dir / "bin" / node / "ethtool").read_text()
    assert f"toolcall.py {lab.dir}/sim.sock {node} -- " in body  # the resident answers


def test_iperf3_between_namespaces_is_real(lab: labkit.Lab, transport: Transport) -> None:
    link = plan(lab.cluster).links[0]
    server = transport.start(Job(link.b.node, f"iperf3 -s -1 -p 18515 -B {link.b.address.ip}", 60))
    # The client only once the server listens: a busy machine may take seconds to start it.
    assert wait_listening(transport, [(link.b.node, 18515)]) == {(link.b.node, 18515): None}
    r = transport.run(Job(link.a.node, f"iperf3 -c {link.b.address.ip} -p 18515 -t 1 -P 2 -J", 20))
    server.wait()
    data = json.loads(r.stdout)
    assert "error" not in data, data.get("error")
    assert data["end"]["sum_received"]["bits_per_second"] > 0.5e9


# -- the shipped suite over ssh --


def test_shipped_suite_passes_over_ssh(runs: dict[str, Runs], topo: str) -> None:
    for run in runs[topo].real:
        assert run.outcomes, run.output[-2000:]
        assert not run.failed, run.failures()


def test_the_run_changes_nothing_on_the_nodes(runs: dict[str, Runs], topo: str) -> None:
    before, after = runs[topo].before, runs[topo].after
    assert before.keys() == after.keys()
    for node, seen in before.items():
        for what, value in seen.items():
            assert after[node][what] == value, f"{node}: {what} changed during the run"


def test_the_run_leaves_no_process(runs: dict[str, Runs], topo: str) -> None:
    strays = runs[topo].strays
    masters = any("root@notty" in p for ps in strays.values() for p in ps)
    hint = "an sshd session with no command: a ControlMaster connection the run left open"
    assert strays == {}, (hint if masters else "") + "\n" + runs[topo].holders


@pytest.mark.parametrize("replayed", REPLAYED)
def test_replay_reproduces_the_verdicts(runs: dict[str, Runs], replayed: str) -> None:
    replay = runs[replayed].replay
    assert replay is not None
    assert replay.outcomes == runs[replayed].real[0].outcomes
