"""What the simulator tests repeat: an example with faults, one RDMA or TCP run, a pair in
parallel, an NCCL run."""

from __future__ import annotations

from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nccl import NcclTestsRun, parse_nccl_tests
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import with_faults

IB = "ib_write_bw -d {dev} -F --report_gbits -q {q} -D 10 -p {port}"
IPERF = "iperf3 -c {peer} -P 4 -t 10 -p {port} -J -B {bind}"
R0 = ("spark-1", "rocep1s0f1", "spark-2", "rocep1s0f1", "192.168.100.12")
R1 = ("spark-1", "roceP2p1s0f1", "spark-2", "roceP2p1s0f1", "192.168.101.12")
"""direct-2's two rails, spark-1 to spark-2, as `rdma` takes them."""


def fault(*specs: str, base: str = "direct-2") -> SimTransport:
    return SimTransport(with_faults(base, *specs))


def out(t: SimTransport, node: str, cmd: str, timeout: float = 60, rc: int = 0) -> str:
    """The command's stdout; it must exit with `rc`."""
    r = t.run(Job(node, cmd, timeout))
    assert r.rc == rc, (cmd, r.rc, r.stdout, r.stderr)
    return r.stdout


def rdma(t: SimTransport, pairs: list[tuple[str, str, str, str, str]], q: int = 1) -> list[float]:
    """(client node, client dev, server node, server dev, server ip) -> Gb/s, all at once."""
    servers = []
    jobs = []
    for i, (cn, cd, sn, sd, ip) in enumerate(pairs):
        port = 18515 + i
        servers.append(t.start(Job(sn, IB.format(dev=sd, q=q, port=port), 60)))
        jobs.append(Job(cn, IB.format(dev=cd, q=q, port=port) + f" {ip}", 60))
    results = t.run_many(jobs)
    for s in servers:
        s.stop()
    return [parse_ib_write_bw(r.stdout).bw_avg_gbps if r.rc == 0 else 0.0 for r in results]


def tcp(t: SimTransport, pairs: list[tuple[str, str, str, str]]) -> list[float]:
    """(client node, bind ip, server node, server ip) -> received Gb/s, all at once."""
    jobs = []
    for i, (cn, bind, sn, ip) in enumerate(pairs):
        t.start(Job(sn, f"iperf3 -s -1 -p {5201 + i}", 60))
        jobs.append(Job(cn, IPERF.format(peer=ip, port=5201 + i, bind=bind), 60))
    return [parse_iperf3_json(r.stdout).received_gbps or 0.0 for r in t.run_many(jobs)]


PLAYBOOK = "-x LD_LIBRARY_PATH=$HOME/nccl/build/lib ~/nccl-tests/build/"
"""The end of a playbook-built node's mpirun line: NCCL's library path, nccl-tests' folder."""


def nccl(t: SimTransport, ips: list[str], binary: str = "all_reduce_perf") -> NcclTestsRun:
    hosts = ",".join(f"{ip}:1" for ip in ips)
    env = {"NCCL_DEBUG": "INFO", **t.model.cluster.spec.nccl.env}
    flags = " ".join(f"-x {k}={v}" for k, v in env.items())
    cmd = (
        f"mpirun --allow-run-as-root -np {len(ips)} -H {hosts} {flags} "
        f"{PLAYBOOK}{binary} -b 16G -e 16G -f 2 -g 1"
    )
    node = t.model.host_node(ips[0])
    assert node is not None
    r = t.run(Job(node, cmd, 3600))
    return parse_nccl_tests(r.stdout)
