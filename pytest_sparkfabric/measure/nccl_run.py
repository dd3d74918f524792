"""NCCL bus bandwidth: nccl-tests across every node, through cluster.yaml's launcher template.
The ranks get `nccl.env` plus `NCCL_DEBUG=INFO` and nothing else (the transport and devices are
read from the log, DOMAIN.md §3), so an `/etc/nccl.conf` that forces Socket shows here as in
production. Rank i runs on the i-th node of cluster.yaml, which is how log lines map to nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_sparkfabric import shell
from pytest_sparkfabric.diagnosis.evidence import NcclEvidence
from pytest_sparkfabric.measure import counters, soak
from pytest_sparkfabric.measure.engine import PhaseName, result_error
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.outcome import NotMeasured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.nccl import NcclTestsRun, parse_nccl_tests
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "nccl"


def hosts(cluster: Cluster) -> list[str]:
    """The launcher's host list, in node (= rank) order: each node's rail-0 address behind a
    switch or cable (every node reaches it); in a ring or mesh, where rail 0 reaches one
    neighbour only, its ssh host."""
    if cluster.topology in ("direct", "switch"):
        return [str(n.rails_of(n.ports[0])[0].address.ip) for n in cluster.nodes]
    return [n.ssh.host if n.ssh else n.name for n in cluster.nodes]


def launch_node(cluster: Cluster) -> str:
    return cluster.spec.nccl.launch_node or cluster.nodes[0].name


def command(cluster: Cluster) -> shell.Command:
    """The operator's launcher template, every value in it a quoted shell word."""
    spec = cluster.spec.nccl
    env = {**spec.env, "NCCL_DEBUG": "INFO"}
    flags = shell.words(
        shell.Words(shell.fill(spec.env_flag, {"key": k, "value": v})) for k, v in env.items()
    )
    return shell.fill(
        spec.launcher,
        {
            "ranks": len(cluster.nodes),
            "hosts": ",".join(f"{h}:1" for h in hosts(cluster)),
            "env_flags": flags,
            "binary": shell.home_path(spec.binary),
            "size": spec.size,
            "mgmt_netdev": spec.mgmt_netdev,
        },
    )


def expected_devices(cluster: Cluster, node: str) -> tuple[str, ...]:
    """The RoCE devices a rank on `node` should open: both rails of every cabled port."""
    return tuple(r.rdma for r in cluster.node(node).rails)


@dataclass(frozen=True)
class RankNet:
    """What NCCL_DEBUG=INFO said about one rank's network."""

    node: str
    rank: int
    networks: frozenset[str] = frozenset()
    devices: tuple[str, ...] = ()
    socket: bool = False
    seen: bool = False


@dataclass(frozen=True)
class NcclRun:
    command: str
    launch_node: str
    result: RunResult | None
    parsed: NcclTestsRun | None
    error: str | None
    ranks: dict[str, RankNet] = field(default_factory=dict)
    unmeasured: NotMeasured | None = None
    """Why the job could not run at all (mpirun or nccl-tests missing, a node lost)."""

    def problems(self) -> list[str]:
        """Why the run does not count as completed (empty: it does)."""
        if self.parsed is None:
            return [self.error or "no output"]
        p = self.parsed
        # A deadline kill keeps the log printed so far (parsed), and says so first.
        out = [self.error] if self.error else []
        if not p.completed:
            tail = _last_line(self.result)
            out.append(
                "the run ended without '# Avg bus bandwidth' (a failure, not a zero)"
                + (f"; last line: {tail}" if tail else "")
            )
        wrong = [r.size_bytes for r in p.rows if (r.oop_wrong or 0) > 0 or (r.ip_wrong or 0) > 0]
        if wrong:
            out.append(f"#wrong is not 0 at sizes {', '.join(map(str, wrong[:5]))}")
        if p.out_of_bounds_ok is False or (p.out_of_bounds or 0) > 0:
            out.append(f"out of bounds values: {p.out_of_bounds} (expected 0 OK)")
        return out

    def busbw_by_size(self) -> dict[int, float]:
        if self.parsed is None:
            return {}
        return {
            r.size_bytes: max(r.oop_busbw_gbytes_s, r.ip_busbw_gbytes_s) for r in self.parsed.rows
        }


def _last_line(r: RunResult | None) -> str:
    if r is None:
        return ""
    lines = [ln.strip() for ln in (r.stderr + "\n" + r.stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def rank_nets(cluster: Cluster, parsed: NcclTestsRun) -> dict[str, RankNet]:
    """Each node's rank and the NET lines it printed (matched by host and pid, else host)."""
    names = [n.name for n in cluster.nodes]
    by_proc: dict[tuple[str | None, int | None], int] = {
        (r.host, r.pid): r.rank for r in parsed.ranks
    }
    by_host: dict[str, int] = {}
    for i, (name, host) in enumerate(zip(names, hosts(cluster), strict=True)):
        by_host.setdefault(name, i)
        by_host.setdefault(host, i)

    def rank_of(host: str | None, pid: int | None) -> int | None:
        found = by_proc.get((host, pid))
        return found if found is not None else by_host.get(host or "")

    # No line carries a host we know: every rank is judged by all lines together.
    lines = [(x.host, x.pid) for x in parsed.transports] + [
        (x.host, x.pid) for x in parsed.networks
    ]
    everyone = all(rank_of(host, pid) is None for host, pid in lines)

    def ranks(host: str | None, pid: int | None) -> list[int]:
        rank = rank_of(host, pid)
        return list(range(len(names))) if everyone else [] if rank is None else [rank]

    nets: dict[int, set[str]] = {}
    devices: dict[int, list[str]] = {}
    socket: set[int] = set()
    for t in parsed.transports:
        for rank in ranks(t.host, t.pid):
            if t.net == "Socket" or t.no_device:
                socket.add(rank)
            elif t.net == "IB" or not everyone:
                mine = devices.setdefault(rank, [])
                mine += [d for d in t.devices if d not in mine]
    for c in parsed.networks:
        for rank in ranks(c.host, c.pid):
            nets.setdefault(rank, set()).add(c.network)
    return {
        n: RankNet(
            n,
            i,
            frozenset(nets.get(i, ())),
            tuple(devices.get(i, ())),
            i in socket,
            i in nets or i in devices or i in socket,
        )
        for i, n in enumerate(names)
    }


def run(fabric: Fabric) -> NcclRun:
    """The NCCL run (once per session); NotMeasured at once when a rank's node does not answer:
    the run needs every node, and mpirun would only wait for the missing one."""
    down = fabric.gone(n.name for n in fabric.cluster.nodes)
    if down:
        raise NotMeasured(f"NCCL needs all {len(fabric.cluster.nodes)} nodes; {down.reason}")
    done = fabric.phase(NAME, measure)
    if done.unmeasured is not None:
        raise done.unmeasured
    return done


def measure(fabric: Fabric) -> NcclRun:
    soak.baseline(fabric)  # the NICs idle, before any traffic of the session
    cluster = fabric.cluster
    spec = cluster.spec.nccl
    cmd = command(cluster)
    node = launch_node(cluster)
    fabric.progress(
        f"NCCL: {spec.binary} on {len(cluster.nodes)} ranks from {node} "
        f"(-b/-e {spec.size}, deadline {shell.duration(spec.timeout_s)})"
    )
    watch = counters.watch_rails(fabric, "nccl", cluster.rails)
    r = fabric.transport.run(Job(node, cmd, spec.timeout_s))
    watch.step(f"NCCL {spec.binary}")
    gap = could_not_run(r)
    if gap is not None:
        return NcclRun(cmd, node, r, None, gap.reason, unmeasured=gap)
    failure = r.failure()
    text = r.stdout + "\n" + r.stderr
    try:
        parsed = parse_nccl_tests(text)
    except ParseError as exc:
        err = failure or result_error(r, spec.binary) or f"{node}: {exc}"
        return NcclRun(cmd, node, r, None, err)
    return NcclRun(cmd, node, r, parsed, failure, rank_nets(cluster, parsed))


def evidence(cluster: Cluster, nccl: NcclRun) -> NcclEvidence:
    p = nccl.parsed
    nets = tuple(sorted({n for rn in nccl.ranks.values() for n in rn.networks}))
    if p is not None and not nets:
        nets = tuple(sorted({c.network for c in p.networks}))
    return NcclEvidence(
        where=f"NCCL {cluster.spec.nccl.binary}",
        completed=p is not None and p.completed,
        busbw_gbytes_s=p.avg_busbw_gbytes_s if p is not None else None,
        networks=nets,
        socket=any(rn.socket for rn in nccl.ranks.values()),
        devices={
            f"{rn.node} (rank {rn.rank})": rn.devices
            for rn in nccl.ranks.values()
            if rn.devices and not rn.socket
        },
        expected=expected_devices(cluster, nccl.launch_node),
        nodes=tuple(n.name for n in cluster.nodes),
    )
