"""NCCL: the environment a job on a node really sees (DOMAIN.md §3, NCCL's order), its bootstrap
interface and why that cannot work; nccl-tests through the launcher, the ranks given `nccl.env` and
`NCCL_DEBUG=INFO` only (an /etc/nccl.conf forcing Socket shows as in production; rank i: node i)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Interface
from typing import TYPE_CHECKING

from pytest_sparkfabric import shell
from pytest_sparkfabric.diagnosis.evidence import NcclEvidence
from pytest_sparkfabric.measure import counters, facts, nic_temp
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed, result_error
from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.probes import ParseError, ncclconf, toolscan
from pytest_sparkfabric.probes.nccl import (
    NcclNetLine,
    NcclNetworkChoice,
    NcclTestsRun,
    parse_nccl_tests,
)
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.probes.ip import IpInterface

NAME: PhaseName = "nccl"
ENV: PhaseName = "nccl_env"


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
    text = r.stderr + "\n" + r.stdout if r is not None else ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
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

    def rank_of(line: NcclNetLine | NcclNetworkChoice) -> int | None:
        found = by_proc.get((line.host, line.pid))
        return found if found is not None else by_host.get(line.host or "")

    # No line carries a host we know: every rank is judged by all lines together.
    lines: list[NcclNetLine | NcclNetworkChoice] = [*parsed.transports, *parsed.networks]
    everyone = all(rank_of(x) is None for x in lines)

    def ranks(line: NcclNetLine | NcclNetworkChoice) -> list[int]:
        rank = rank_of(line)
        return list(range(len(names))) if everyone else [] if rank is None else [rank]

    nets: dict[int, set[str]] = {}
    devices: dict[int, list[str]] = {}
    socket: set[int] = set()
    for t in parsed.transports:
        for rank in ranks(t):
            if t.net == "Socket" or t.no_device:
                socket.add(rank)
            elif t.net == "IB" or not everyone:
                mine = devices.setdefault(rank, [])
                mine += [d for d in t.devices if d not in mine]
    for c in parsed.networks:
        for rank in ranks(c):
            nets.setdefault(rank, set()).add(c.network)
    seen = {*nets, *devices, *socket}
    return {
        n: RankNet(
            n, i, frozenset(nets.get(i, ())), tuple(devices.get(i, ())), i in socket, i in seen
        )
        for i, n in enumerate(names)
    }


def run(fabric: Fabric) -> NcclRun:
    """The NCCL run (once per session); NotMeasured at once when a rank's node does not answer:
    the run needs every node, and mpirun would only wait for the missing one."""
    if down := fabric.gone(n.name for n in fabric.cluster.nodes):
        raise NotMeasured(f"NCCL needs all {len(fabric.cluster.nodes)} nodes; {down.reason}")
    done = fabric.phase(NAME, measure)
    if done.unmeasured is not None:
        raise done.unmeasured
    return done


def measure(fabric: Fabric) -> NcclRun:
    nic_temp.baseline(fabric)  # the NICs idle, before any traffic of the session
    cluster, spec = fabric.cluster, fabric.cluster.spec.nccl
    cmd, node = command(cluster), launch_node(cluster)
    fabric.progress(
        f"NCCL: {spec.binary} on {len(cluster.nodes)} ranks from {node} "
        f"(-b/-e {spec.size}, deadline {shell.duration(spec.timeout_s)})"
    )
    watch = counters.watch_rails(fabric, "nccl", cluster.rails)
    r = fabric.transport.run(Job(node, cmd, spec.timeout_s))
    watch.step(f"NCCL {spec.binary}")
    if (gap := could_not_run(r)) is not None:
        return NcclRun(cmd, node, r, None, gap.reason, unmeasured=gap)
    failure = r.failure()
    try:
        parsed = parse_nccl_tests(r.stdout + "\n" + r.stderr)
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


# -- the environment ---------------------------------------------------------------------------

JOB_ENV_NAME = "cluster.yaml nccl.env"


def conf_reads(job_env: Mapping[str, str]) -> list[tuple[str, ncclconf.SourceKind, str]]:
    """The files to read after cluster.yaml's `nccl.env`: `$NCCL_CONF_FILE` where it sets one,
    `~/.nccl.conf` and `/etc/nccl.conf`, every one read (ncclconf.effective_nccl_env skips
    `~/.nccl.conf` when `$NCCL_CONF_FILE` is set, as NCCL does): report name, kind, command."""
    reads: list[tuple[str, ncclconf.SourceKind, str]] = [
        ("~/.nccl.conf", "user_conf", shell.join(["cat", shell.home_path("~/.nccl.conf")])),
        ("/etc/nccl.conf", "system_conf", shell.join(["cat", "/etc/nccl.conf"])),
    ]
    if conf_file := job_env.get("NCCL_CONF_FILE"):
        # NCCL opens the path as it is (no ~): quoted whole, after `--` in case of a leading -.
        reads.insert(0, (conf_file, "conf_file", shell.join(["cat", "--", conf_file])))
    return reads


# Where the NCCL packages (libnccl2) and a `make install` put the library; its version is in the
# file's name.
LIBNCCL = "libnccl.so.2"
LIBRARY_GLOBS = (
    "/usr/lib/*-linux-gnu/libnccl.so.2.*",
    "/usr/local/lib/libnccl.so.2.*",
    "/usr/local/nccl/lib/libnccl.so.2.*",
)


def library_patterns(cluster: Cluster) -> tuple[str, ...]:
    """Where a rank loads libnccl from: the preflight looks there, and the version is read there.
    The launcher exports nccl.env's LD_LIBRARY_PATH when it sets one; the loader then looks
    there and in its cache, whose directories the system globs cover."""
    dirs = cluster.spec.nccl.env.get("LD_LIBRARY_PATH", "")
    mine = tuple(f"{d.rstrip('/')}/{LIBNCCL}*" for d in dirs.split(":") if d.startswith("/"))
    return (*mine, *LIBRARY_GLOBS)


@dataclass(frozen=True, slots=True)
class NcclEnv:
    """By node: the NCCL variables a job there gets and where each comes from, and the
    installed NCCL's version (from the library's file name; None where none was found)."""

    nodes: Mapping[str, Measured[dict[str, ncclconf.Decided]]]
    versions: Mapping[str, ncclconf.NcclVersion | None]


def measure_env(fabric: Fabric) -> NcclEnv:
    env = fabric.cluster.spec.nccl.env
    reads = conf_reads(env)
    nodes = [n.name for n in fabric.cluster.nodes]
    jobs = [Job(n, command, QUICK_S) for n in nodes for _, _, command in reads]
    # The preflight's own lookup (toolscan), over the places a rank loads the library from.
    lookup = toolscan.Lookups(libs={LIBNCCL: library_patterns(fabric.cluster)}, packages=())
    lib_jobs = [Job(n, toolscan.build_preflight(lookup), QUICK_S) for n in nodes]
    results = iter(fabric.run_all(jobs + lib_jobs))
    out: dict[str, Measured[dict[str, ncclconf.Decided]]] = {}
    for node in nodes:
        sources = [ncclconf.EnvSource.from_mapping(JOB_ENV_NAME, env)]
        errors: list[str] = []
        for (name, kind, _), r in zip(reads, results, strict=False):
            # A missing file is normal; anything else that stops the read is an error.
            if failure := r.failure():
                errors.append(failure)
            elif r.rc != 0 and "No such file" not in r.stderr:
                errors.append(f"{r.node}: cannot read {name}: {r.stderr.strip() or f'rc {r.rc}'}")
            if r.rc == 0:
                sources.append(ncclconf.EnvSource.from_text(name, r.stdout, kind))
        out[node] = (
            Measured.failed(errors[0])
            if errors
            else Measured.of(ncclconf.effective_nccl_env(sources))
        )
    libs = [parsed(r, "sh", toolscan.parse_preflight).value for r in results]
    found = {
        n: ncclconf.find_nccl_version(" ".join(f.libs.get(LIBNCCL, ()))) if f else None
        for n, f in zip(nodes, libs, strict=True)
    }
    return NcclEnv(out, found)


def version(fabric: Fabric, node: str) -> ncclconf.NcclVersion | None:
    """The NCCL version installed on `node`, None when no library was found."""
    return fabric.phase(ENV, measure_env).versions.get(node)


def effective(fabric: Fabric, node: str) -> Measured[dict[str, ncclconf.Decided]]:
    """The NCCL environment a job on `node` really sees, each variable with its source."""
    return fabric.phase(ENV, measure_env).nodes[node]


# -- the launch environment ---------------------------------------------------------------------

OMPI_IF_VARS = ("OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_oob_tcp_if_include")
"""Open MPI interface lists a job's environment may carry (mpirun -x)."""
VIRTUAL = ("docker", "virbr", "lo")


@dataclass(frozen=True, slots=True)
class SocketChoice:
    """A node's NCCL_SOCKET_IFNAME as NCCL reads it, what it selects, and what is wrong."""

    node: str
    setting: str
    """`NCCL_SOCKET_IFNAME=x (from where)`, or `NCCL_SOCKET_IFNAME unset`."""
    selected: tuple[str, ...]
    address: IPv4Interface | None
    problems: tuple[str, ...]
    down_fabric: bool = False
    """Nothing selected because every netdev it names is a fabric rail without link: the
    link is the cause (NVIDIA's two-node playbook bootstraps over the fabric netdev)."""


def socket_choice(fabric: Fabric, node: str) -> SocketChoice | None:
    """None where the node's environment or interfaces could not be read."""
    env, node_facts = effective(fabric, node), facts.node(fabric, node)
    if env.value is None or node_facts.value is None:
        return None
    found = dict(node_facts.value.interfaces)
    d = env.value.get("NCCL_SOCKET_IFNAME")
    setting = f"NCCL_SOCKET_IFNAME={d.value} (from {d.where})" if d else "NCCL_SOCKET_IFNAME unset"
    ifaces = [ncclconf.Iface(i.name, i.carrier, bool(i.ipv4 or i.ipv6)) for i in found.values()]
    selected = ncclconf.select_socket_ifs(d.value if d else None, ifaces)
    problems: list[str] = []
    address = None
    down_fabric = False
    if not selected:
        rails = {r.netdev for r in fabric.cluster.node(node).rails}
        named = [p.split(":")[0] for p in (d.value.lstrip("^=") if d else "").split(",") if p]
        down_fabric = bool(named) and all(
            n in rails and n in found and not found[n].carrier for n in named
        )
        why = "; ".join(_state(n, found.get(n)) for n in named if not n.startswith("^"))
        problems.append(
            f"{setting} selects no running interface with an address"
            + (f" ({why})" if why else "")
            + ": NCCL stops with 'Bootstrap : no socket interface found'"
        )
    else:
        first = found[selected[0]]
        address = first.ipv4[0] if first.ipv4 else None
        if selected[0].startswith(VIRTUAL):
            problems.append(
                f"{setting} makes NCCL bootstrap over {selected[0]}, a local virtual interface "
                "(docker0 has the same address on every node)"
            )
    for var in OMPI_IF_VARS:
        value = fabric.cluster.spec.nccl.env.get(var)
        for name in (value or "").split(","):
            if name and "/" not in name and not (name in found and found[name].carrier):
                problems.append(
                    f"{var}={value} (cluster.yaml nccl.env): {_state(name, found.get(name))}"
                )
    return SocketChoice(node, setting, tuple(selected), address, tuple(problems), down_fabric)


def _state(name: str, iface: IpInterface | None) -> str:
    if iface is None:
        return f"no interface {name}"
    if not iface.carrier:
        return f"{name} is down (no carrier)"
    if not (iface.ipv4 or iface.ipv6):
        return f"{name} has no address"
    return f"{name} is up"


def problems(fabric: Fabric, node: str, *, down_links: bool = True) -> list[str]:
    """Everything wrong with the launch environment of `node` (empty: fine or not read);
    without `down_links`, nothing where a fabric netdev without link is all that is wrong."""
    choice = socket_choice(fabric, node)
    if choice is None or (choice.down_fabric and not down_links):
        return []
    # A bootstrap address on a fabric rail the other nodes' bootstrap addresses are not on (a
    # ring or mesh netdev reaches one neighbour only). Unset, which interface NCCL takes first
    # follows the node's interface order, which a check cannot know for certain: only a setting
    # that names the fabric netdev is judged.
    here, rails = choice.address, {r.netdev for r in fabric.cluster.node(node).rails}
    if choice.setting.endswith("unset") or here is None or choice.selected[0] not in rails:
        return list(choice.problems)
    away = [
        f"{n.name} ({c.address.ip})"
        for n in fabric.cluster.nodes
        if n.name != node
        and (c := socket_choice(fabric, n.name)) is not None
        and c.address is not None
        and c.address.ip not in here.network
    ]
    far = (
        f"{choice.setting} bootstraps over the fabric netdev {choice.selected[0]} ({here}), "
        f"which {', '.join(away)} cannot reach"
    )
    return [*choice.problems, *([far] if away else [])]
