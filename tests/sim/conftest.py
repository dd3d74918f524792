"""Helpers of the simulator tests: an example with faults, a command's output, and runs of
ib_write_bw, iperf3 and NCCL (imported by name; no fixtures here)."""

from __future__ import annotations

from pathlib import Path

from pytest_sparkfabric.cluster import Cluster, load_cluster, parse_cluster
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nccl import NcclTestsRun, parse_nccl_tests
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from pytest_sparkfabric.transport.base import Job, RunResult
from sparkfabric_sim.transport import SimTransport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PLAYBOOK = "-x LD_LIBRARY_PATH=$HOME/nccl/build/lib ~/nccl-tests/build/"
"""The end of a playbook-built node's mpirun line: NCCL's library path, nccl-tests' folder."""
IB = "ib_write_bw -d {} -F --report_gbits"
"""ib_write_bw on a device, as the suite runs it (the simulator tests' one form)."""
Pair = tuple[str, str, str, str, str]
R0: Pair = ("spark-1", "rocep1s0f1", "spark-2", "rocep1s0f1", "192.168.100.12")
R1: Pair = ("spark-1", "roceP2p1s0f1", "spark-2", "roceP2p1s0f1", "192.168.101.12")
"""direct-2's two rails, spark-1 to spark-2, as `rdma` takes them."""
LOOP1: Pair = ("spark-1", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11")
IPS4 = [f"192.168.100.{11 + i}" for i in range(4)]


def example(name: str) -> Cluster:
    return load_cluster(EXAMPLES / f"{name}.yaml")


def with_faults(name: str, *faults: str, seed: int = 7) -> Cluster:
    """An example with `simulate.faults` replaced (each fault a YAML flow mapping)."""
    text = (EXAMPLES / f"{name}.yaml").read_text().split("simulate:")[0]
    text += f"simulate:\n  seed: {seed}\n" + ("  faults:\n" if faults else "")
    text += "".join(f"    - {f}\n" for f in faults)
    return parse_cluster(text, source=f"{name}+faults")


def sim(name: str = "direct-2", *faults: str, seed: int | None = None) -> SimTransport:
    """The example on the simulator; given faults or a seed, `with_faults` of it."""
    if faults or seed is not None:
        return SimTransport(with_faults(name, *faults, seed=7 if seed is None else seed))
    return SimTransport(example(name))


def run(t: SimTransport, node: str, cmd: str, timeout: float = 60) -> RunResult:
    return t.run(Job(node, cmd, timeout))


def out(t: SimTransport, node: str, cmd: str, timeout: float = 60, rc: int = 0) -> str:
    """The command's stdout; it must exit with `rc`."""
    r = run(t, node, cmd, timeout)
    assert r.rc == rc, (cmd, r.rc, r.stdout, r.stderr)
    return r.stdout


def served(
    t: SimTransport, server: str, cmd: str, node: str, peer: str, flags: str = ""
) -> RunResult:
    """`cmd` started on `server` (with `flags`), then run on `node` against `peer`."""
    t.start(Job(server, f"{cmd} {flags}".rstrip(), 60))
    return run(t, node, f"{cmd} {peer}")


def rdma(t: SimTransport, pairs: list[Pair], q: int = 1) -> list[float]:
    """(client node, client dev, server node, server dev, server ip) -> Gb/s, all at once."""
    servers, jobs = [], []
    for i, (cn, cd, sn, sd, ip) in enumerate(pairs):
        flags = f" -q {q} -D 10 -p {18515 + i}"
        servers.append(t.start(Job(sn, IB.format(sd) + flags, 60)))
        jobs.append(Job(cn, IB.format(cd) + f"{flags} {ip}", 60))
    results = t.run_many(jobs)
    for s in servers:
        s.stop()
    return [_gbps(r) for r in results]


def _gbps(r: RunResult) -> float:
    if r.rc == 0:
        return parse_ib_write_bw(r.stdout).bw_avg_gbps
    # perftest's client when no server answers: nothing moved. Any other failure is the test's.
    assert "Unable to init the socket connection" in r.stdout + r.stderr, (r.rc, r.stderr)
    return 0.0


def tcp(t: SimTransport, pairs: list[tuple[str, str, str, str]]) -> list[float]:
    """(client node, bind ip, server node, server ip) -> received Gb/s, all at once."""
    jobs = []
    for i, (cn, bind, sn, ip) in enumerate(pairs):
        t.start(Job(sn, f"iperf3 -s -1 -p {5201 + i}", 60))
        jobs.append(Job(cn, f"iperf3 -c {ip} -P 4 -t 10 -p {5201 + i} -J -B {bind}", 60))
    got = [parse_iperf3_json(r.stdout).received_gbps for r in t.run_many(jobs)]
    assert None not in got, got
    return [g for g in got if g is not None]


def nccl(t: SimTransport, ips: list[str], binary: str = "all_reduce_perf") -> NcclTestsRun:
    env = {"NCCL_DEBUG": "INFO", **t.model.cluster.spec.nccl.env}
    flags = " ".join(f"-x {k}={v}" for k, v in env.items())
    hosts = ",".join(f"{ip}:1" for ip in ips)
    cmd = f"mpirun --allow-run-as-root -np {len(ips)} -H {hosts} {flags} {PLAYBOOK}{binary}"
    node = t.model.host_node(ips[0])
    assert node is not None
    return parse_nccl_tests(run(t, node, cmd + " -b 16G -e 16G -f 2 -g 1", 3600).stdout)
