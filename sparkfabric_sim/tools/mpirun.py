"""`mpirun ... all_reduce_perf -b 16G -e 16G -f 2 -g 1`: Open MPI launching nccl-tests."""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Mapping
from ipaddress import IPv4Interface, IPv4Network

from sparkfabric_sim import nccl_model, noise, roce
from sparkfabric_sim.hardware import Netdev, SimNode
from sparkfabric_sim.nccl_model import RankPlan
from sparkfabric_sim.outcome import Outcome, fail
from sparkfabric_sim.render import nccl as render
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.world import SYSTEM_PATH, Ctx

COLLECTIVES = {
    "all_reduce_perf": ("all_reduce", "sum"),
    "all_gather_perf": ("all_gather", "none"),
    "reduce_scatter_perf": ("reduce_scatter", "sum"),
}
STARTUP_S = 4.0
LATENCY_US = 30.0
HALF_SIZE = 4 * 2**20
SSH_TIMEOUT_S = 10.0
LOCAL_ALGBW = 180.0
_SIZE = re.compile(r"^(\d+)([KMGkmg]?)$")


@functools.cache  # built once: parse_args leaves a parser unchanged
def _mpi_parser() -> Parser:
    p = Parser("mpirun")
    for opt in ("-np", "-n", "--np", "-c"):
        p.add_argument(opt, dest="np", type=int)
    for opt in ("-H", "--host", "-host"):
        p.add_argument(opt, dest="hosts", action="append")
    p.add_argument("-x", dest="export", action="append", default=[])
    for opt in ("--mca", "-mca", "--gmca", "-gmca"):
        p.add_argument(opt, nargs=2, action="append", dest="mca")
    for opt in (
        "--bind-to",
        "--map-by",
        "--rank-by",
        "-npernode",
        "--npernode",
        "--prefix",
        "--wdir",
        "-wdir",
        "--hostfile",
        "-hostfile",
    ):
        p.add_argument(opt, dest=opt.lstrip("-").replace("-", "_"))
    for flag in (
        "--allow-run-as-root",
        "--oversubscribe",
        "--tag-output",
        "--report-bindings",
        "-v",
        "--display-map",
        "-q",
        "--quiet",
    ):
        p.add_argument(flag, action="store_true", dest=flag.lstrip("-").replace("-", "_"))
    p.add_argument("program", nargs=argparse.REMAINDER)
    return p


@functools.cache  # built once: parse_args leaves a parser unchanged
def _bench_parser() -> Parser:
    p = Parser("nccl-tests")
    p.add_argument("-b", "--minbytes", dest="b", default="32M")
    p.add_argument("-e", "--maxbytes", dest="e", default="32M")
    p.add_argument("-f", "--stepfactor", dest="f", type=int, default=2)
    p.add_argument("-g", "--ngpus", dest="g", type=int, default=1)
    for opt in ("-n", "-w", "-c", "-d", "-o", "-t", "-a", "-z", "-G", "-C", "-J", "-i", "-m"):
        p.add_argument(opt, dest="x" + opt[1:])
    return p


def size_bytes(text: str) -> int:
    m = _SIZE.match(text)
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2).lower()]


def mpirun(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _mpi_parser().parse_args(argv[1:])
    except ArgError as exc:
        return fail(1, f"mpirun: Error: {exc.message}\n")
    if not a.program:
        return fail(1, "No executable was specified on the mpirun command line.\n")
    hosts: list[str] = []
    for spec in a.hosts or [ctx.node.name]:
        for item in spec.split(","):
            host, _, slots = item.partition(":")
            hosts += [host] * (int(slots) if slots.isdigit() else 1)
    np = a.np or len(hosts)
    if np > len(hosts) and not a.oversubscribe:
        return fail(
            1,
            "There are not enough slots available in the system to satisfy the "
            f"{np}\nslots that were requested by the application.\n",
        )
    if ctx.node.user == "root" and not a.allow_run_as_root and not _root_allowed(ctx.env):
        return fail(1, render.MPI_ROOT)
    placement = [hosts[i % len(hosts)] for i in range(np)]
    nodes = []
    for host in placement:
        name = ctx.model.host_node(host)
        if name is None:
            return fail(
                1,
                f"ssh: Could not resolve hostname {host}: Name or service not known\n"
                + render.MPI_DAEMON,
            )
        if ctx.model.node(name).unreachable:
            err = f"ssh: connect to host {host} port 22: Connection timed out\n"
            return Outcome(1, "", err + render.MPI_DAEMON, SSH_TIMEOUT_S)
        nodes.append(ctx.model.node(name))
    oob = _mca(a, "oob_tcp_if_include") or _mca(a, "prte_if_include")
    missing = next((n for n in nodes if oob and not _has_network(n, oob)), None)
    if oob is not None and missing is not None:
        return Outcome(1, "", render.oob_not_found(oob) + render.MPI_DAEMON, SSH_TIMEOUT_S)
    binary = a.program[0].rsplit("/", 1)[-1]
    if binary not in COLLECTIVES:
        return fail(1, f"sh: 1: {a.program[0]}: not found\n" + render.MPI_NONZERO)
    try:
        b = _bench_parser().parse_args(a.program[1:])
        low, high = size_bytes(b.b), size_bytes(b.e)
    except (ArgError, ValueError):
        return fail(1, "", render.MPI_NONZERO)
    process = {}
    for item in a.export:
        key, eq, value = item.partition("=")
        if eq:
            process[key] = value
        elif key in ctx.env:
            process[key] = ctx.env[key]
    for node, host in zip(nodes, placement, strict=True):
        if not _finds(node, a.program[0], process):
            return Outcome(1, "", render.mpi_not_found(host, a.program[0]), STARTUP_S)
    # Any home's: behind the lab's wrappers the real login shell expanded $HOME.
    if not any(d.endswith("/nccl/build/lib") for d in _dirs(process, "LD_LIBRARY_PATH")):
        err = render.no_libnccl(a.program[0]) + render.MPI_NONZERO
        return Outcome(127, "", err, STARTUP_S)
    plans = [nccl_model.plan_rank(ctx, i, n, process) for i, n in enumerate(nodes)]
    return _run(ctx, binary, plans, low, high, max(2, b.f))


# NCCL's IB QPs use the default retry count and a 2^14 * 4.096 us timeout (NCCL_IB_TIMEOUT
# 20 is the default since 2.14: ~4.3 s per try, 7 retries): the first collective stalls, then fails.
RETRY_EXHAUSTED_S = 4.3 * 8


def _roce_dropped(ctx: Ctx, plans: list[RankPlan]) -> tuple[int, Netdev, Netdev] | None:
    """The first IB device pair of neighbouring ranks whose RoCE packets the path drops."""
    ib = [p for p in plans if p.net == "IB"]
    for i, p in enumerate(ib):
        q = ib[(i + 1) % len(ib)]
        if q.node.name == p.node.name:
            continue
        for dev in p.devices:
            peer = next((d for d in q.devices if d.rail == dev.rail), None)
            if peer is None:
                continue
            mtu = roce.active_mtu(min(dev.mtu, peer.mtu))
            if roce.packet_bytes(mtu) > ctx.rt.path_mtu(dev, peer):
                return p.rank, dev, peer
    return None


def _completion_error(dev: Netdev, peer: Netdev) -> str:
    # src/transport/net_ib.cc (v2.28.9-1 L2543): the sender's completion error, RC retries
    # exhausted (IBV_WC_RETRY_EXC_ERR 12, mlx5 vendor syndrome 0x81 = 129) on an RDMA write.
    ip = peer.address.ip if peer.address else "0.0.0.0"
    return (
        f"NET/IB: Got completion from peer {ip}<{40000 + peer.ifindex}> with "
        "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) reqSize=524288 "
        f"vendor_err=129 req_type=Send hca {dev.rdma}"
    )


def _dirs(env: Mapping[str, str], name: str) -> list[str]:
    return [d for d in env.get(name, "").split(":") if d]


def _finds(node: SimNode, program: str, process: Mapping[str, str]) -> bool:
    """Whether a rank on `node` finds nccl-tests: where NVIDIA's nccl playbook builds it
    (~/nccl-tests/build, never on a non-interactive PATH) by its path, or on the rank's PATH
    (the exported one, else the system PATH orted starts with)."""
    if program.rsplit("/", 1)[-1] in node.missing:
        return False
    if "/" in program:
        return True
    path = _dirs({"PATH": SYSTEM_PATH, **process}, "PATH")
    return any(d.endswith("/nccl-tests/build") for d in path)


def _root_allowed(env: Mapping[str, str]) -> bool:
    # orted_submit.c: both variables, each exactly "1".
    return env.get("OMPI_ALLOW_RUN_AS_ROOT") == "1" == env.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")


def _mca(a: argparse.Namespace, name: str) -> str | None:
    """The last `--mca NAME VALUE` given (a later one overrides an earlier one)."""
    values = [v for k, v in (a.mca or []) if k == name]
    return values[-1] if values else None


def _has_network(node: SimNode, spec: str) -> bool:
    """oob_tcp_if_include: interface names or CIDR subnets, comma separated; any one on the
    node is enough (orte/mca/oob/tcp, opal_ifnametoaddr / subnet match)."""
    addrs = {node.mgmt.name: node.mgmt.address, "lo": IPv4Interface("127.0.0.1/8")}
    addrs.update({d.name: d.address for d in node.netdevs if d.address is not None})
    for item in (x.strip() for x in spec.split(",") if x.strip()):
        if "/" in item:
            try:
                net = IPv4Network(item, strict=False)
            except ValueError:
                continue
            if any(addr.ip in net for addr in addrs.values()):
                return True
        elif item in addrs:
            return True
    return False


def _run(ctx: Ctx, binary: str, plans: list[RankPlan], low: int, high: int, step: int) -> Outcome:
    collective, redop = COLLECTIVES[binary]
    ranks = [
        render.Rank(
            p.rank, p.node.name, 20000 + noise.hex_id(ctx.seed, 14, "pid", p.node.name, ctx.t)
        )
        for p in plans
    ]
    code = render.version_code(nccl_model.version(ctx))
    head = render.header(binary, low, high, step, ranks, code)
    info = "".join(_info_lines(ctx, p, r, len(plans)) for p, r in zip(plans, ranks, strict=True))
    broken = next((p for p in plans if p.socket_if is None), None)
    if broken is not None:
        r = ranks[broken.rank]
        text = render.warn(r.host, r.pid, r.pid, "Bootstrap : no socket interface found")
        fail_line = render.test_failure(
            r.host, "internal error - please report this issue to the NCCL developers"
        )
        return Outcome(1, head + info + text + fail_line, render.MPI_NONZERO, STARTUP_S)
    dropped = _roce_dropped(ctx, plans)
    if dropped is not None:
        rank, mine, peer = dropped
        r = ranks[rank]
        text = render.warn(r.host, r.pid, r.pid + 7, _completion_error(mine, peer))
        fail_line = render.test_failure(
            r.host, "remote process exited or there was a network error"
        )
        total = STARTUP_S + RETRY_EXHAUSTED_S
        return Outcome(1, head + info + text + fail_line, render.MPI_NONZERO, total)
    fac = nccl_model.factor(collective, len(plans))
    # One rank moves data inside the GPU only: busbw is 0 by definition, algbw is memory speed.
    peak = nccl_model.peak_busbw(ctx, plans, binary) if fac else LOCAL_ALGBW
    rows, elapsed, sizes = [], STARTUP_S, []
    size = low
    while size <= high:
        sizes.append(size)
        size *= step
    timeline = [(STARTUP_S, head + info + render.TABLE_HEAD)]
    for size in sizes:
        busbw = peak * size / (size + HALF_SIZE)
        jit = noise.rng(ctx.seed, "row", binary, size, len(plans))
        per = fac or 1.0
        oop_us = size / (busbw * jit.uniform(0.997, 1.001) / per * 1e3) + LATENCY_US
        ip_us = size / (busbw * jit.uniform(0.998, 1.002) / per * 1e3) + LATENCY_US
        oop_alg, ip_alg = size / oop_us / 1e3, size / ip_us / 1e3
        count = size // 4 // (1 if collective == "all_reduce" else len(plans))
        rows.append(
            render.Row(
                size,
                count,
                "float",
                redop,
                oop_us,
                oop_alg,
                oop_alg * fac,
                ip_us,
                ip_alg,
                ip_alg * fac,
            )
        )
        elapsed += (render.WARMUP_ITERS + render.ITERS) * (oop_us + ip_us) / 1e6
        timeline.append((elapsed, timeline[-1][1] + render.row(rows[-1])))
    avg = sum(r.oop_busbw + r.ip_busbw for r in rows) / (2 * len(rows)) if rows else 0.0
    if len({p.node.name for p in plans}) > 1 and ctx.changes():
        # The collective's traffic crosses the switch for as long as the run lasts.
        ctx.rt.switch_busy_until = max(ctx.rt.switch_busy_until, ctx.t + elapsed)
    body = render.TABLE_HEAD + "".join(render.row(r) for r in rows)
    out = head + info + body + render.footer(binary, avg)
    return Outcome(0, out, "", elapsed, head + info, timeline=tuple(timeline))


def _info_lines(ctx: Ctx, p: RankPlan, r: render.Rank, nranks: int) -> str:
    if not p.debug_info:
        return ""
    tid = r.pid + 7
    oob = f"{p.socket_if[0]}:{p.socket_if[1]}<0>" if p.socket_if else "none"
    lines = [render.info(r.host, r.pid, r.pid, f"Bootstrap : Using {oob}")]
    if p.rank == 0:
        lines.append(f"NCCL version {nccl_model.nccl_version_text(ctx)}\n")
    if p.net == "IB":
        labels = p.labels or tuple((-1, -1) for _ in p.devices)
        devs = " ".join(
            f"[{i}]{d.rdma}:1{_rail_plane(label)}/RoCE"
            for i, (d, label) in enumerate(zip(p.devices, labels, strict=True))
        )
        lines.append(render.info(r.host, r.pid, tid, f"NET/IB : Using {devs} [RO]; OOB {oob}"))
    else:
        if p.ib_tried_none:
            lines.append(render.info(r.host, r.pid, tid, "NET/IB : No device found."))
        sock = f"[0]{oob}" if p.socket_if else ""
        lines.append(render.info(r.host, r.pid, tid, f"NET/Socket : Using {sock}"))
    lines.append(render.info(r.host, r.pid, tid, f"Using network {p.net}"))
    lines.append(
        render.info(
            r.host,
            r.pid,
            tid,
            f"ncclCommInitRank comm 0x{noise.hex_id(ctx.seed, 44, 'comm', r.host):x} rank {p.rank} "
            f"nranks {nranks} cudaDev 0 nvmlDev 0 busId f01000 commId "
            f"0x{noise.hex_id(ctx.seed, 64, 'commid'):x} - Init COMPLETE",
        )
    )
    return "".join(lines)


def _rail_plane(label: tuple[int, int]) -> str:
    # NCCL v2.30.7-1 src/transport/net_ib/init.cc L494-503: ":rail", "::plane" or ":rail:plane".
    rail, plane = label
    text = f":{rail}" if rail != -1 else (":" if plane != -1 else "")
    return text + (f":{plane}" if plane != -1 else "")


def nccl_test(ctx: Ctx, argv: list[str]) -> Outcome:
    """A test binary run without a launcher: one rank on this node."""
    binary = argv[0].rsplit("/", 1)[-1]
    try:
        b = _bench_parser().parse_args(argv[1:])
        low, high = size_bytes(b.b), size_bytes(b.e)
    except (ArgError, ValueError):
        return fail(1, "", "Invalid arguments\n")
    plan = nccl_model.plan_rank(ctx, 0, ctx.node, dict(ctx.env))
    return _run(ctx, binary, [plan], low, high, max(2, b.f))


TOOLS = {"mpirun": mpirun, "mpiexec": mpirun, **{name: nccl_test for name in COLLECTIVES}}
