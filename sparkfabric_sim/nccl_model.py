"""What NCCL decides on each rank, and the bus bandwidth that follows (DOMAIN.md sections 3, 5).

Per rank: the effective environment (process env > $NCCL_CONF_FILE or ~/.nccl.conf >
/etc/nccl.conf), the network (IB unless NCCL_NET=Socket / NCCL_IB_DISABLE=1 or no device is
left), the RoCE devices NCCL_IB_HCA selects among the active ones, the socket interface.
Figures: 2 nodes ~22-23.8 GB/s, 4 via switch 23-24, one rail ~13.9, Socket a few GB/s,
switch CPU forwarding ~0.46; ring and mesh lower.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address

from pytest_sparkfabric.cluster import hardware
from sparkfabric_sim import bandwidth, nccl_conf, nccl_select, noise
from sparkfabric_sim.hardware import LINE_RATE_MBPS, Netdev, SimNode
from sparkfabric_sim.vfs import VfsError
from sparkfabric_sim.world import Ctx

HEALTHY_DOMAIN_GBPS = 112.5
SINGLE_RAIL = (13.6, 14.2)
PEAK = {"direct": (22.6, 23.7), "switch": (23.05, 24.0), "mesh": (15.5, 17.5), "ring": (11.5, 13.5)}
SOCKET_FABRIC = (2.6, 3.4)
SOCKET_MGMT = (0.85, 1.0)
CPU_FORWARDING = (0.40, 0.50)
PFC_STALL = (0.10, 0.20)


@dataclass(frozen=True, slots=True)
class RankPlan:
    rank: int
    node: SimNode
    env: Mapping[str, str]
    net: str  # "IB" | "Socket"
    devices: tuple[Netdev, ...]
    ib_tried_none: bool
    socket_if: tuple[str, IPv4Address] | None
    # NCCL >= 2.30.7: (rail, plane) from the NCCL_IB_HCA entry that took each device, -1 = unset.
    labels: tuple[tuple[int, int], ...] = ()

    @property
    def debug_info(self) -> bool:
        return self.env.get("NCCL_DEBUG", "").upper() in ("INFO", "TRACE")


def effective_env(ctx: Ctx, node: SimNode, process: Mapping[str, str]) -> dict[str, str]:
    vfs = ctx.world.vfs(node, ctx.t)

    def read(path: str) -> str | None:
        try:
            return vfs.read(path)
        except VfsError:
            return None

    return nccl_conf.resolve(process, node.home, read)


def nccl_version_text(ctx: Ctx) -> str:
    """What `NCCL version ...` prints; the nodes share one build unless the spec says otherwise."""
    sim = ctx.model.cluster.spec.simulate
    return nccl_select.configured(sim.nccl_version if sim is not None else None)


def version(ctx: Ctx) -> tuple[int, int, int]:
    return nccl_select.parse_version(nccl_version_text(ctx))


def _match_ifname(spec: str | None, names: Sequence[str], ver: tuple[int, int, int]) -> list[str]:
    # src/misc/socket.cc / os/linux.cc: a value of one character or less counts as unset; the
    # same parseStringList/matchIfList as NCCL_IB_HCA, with port -1 (any ":x" is ignored).
    if not spec or len(spec) <= 1:
        return [n for n in names if not n.startswith(("docker", "lo", "virbr"))]
    f = nccl_select.hca_filter(spec, ver)
    return [n for n in names if f.keeps(n, -1)]


def socket_interface(
    ctx: Ctx, node: SimNode, env: Mapping[str, str]
) -> tuple[str, IPv4Address] | None:
    candidates: list[tuple[str, IPv4Address]] = [(hardware.MGMT_NETDEV, node.mgmt.address.ip)]
    for dev in node.netdevs:
        if dev.address is not None and ctx.rt.carrier(dev, ctx.t):
            candidates.append((dev.name, dev.address.ip))
    names = _match_ifname(env.get("NCCL_SOCKET_IFNAME"), [n for n, _ in candidates], version(ctx))
    return next((c for c in candidates if c[0] in names), None)


def plan_rank(ctx: Ctx, rank: int, node: SimNode, process: Mapping[str, str]) -> RankPlan:
    env = effective_env(ctx, node, process)
    sock = socket_interface(ctx, node, env)
    socket_forced = env.get("NCCL_NET", "").lower() == "socket" or env.get("NCCL_IB_DISABLE") == "1"
    if socket_forced:
        return RankPlan(rank, node, env, "Socket", (), False, sock)
    active = [
        d for d in sorted(node.netdevs, key=lambda d: (d.port, d.rail)) if ctx.rt.carrier(d, ctx.t)
    ]
    hca = nccl_select.hca_filter(env.get("NCCL_IB_HCA"), version(ctx))
    devices = tuple(d for d in active if hca.keeps(d.rdma, 1))
    if not devices:
        return RankPlan(rank, node, env, "Socket", (), True, sock)
    labels = []
    for d in devices:
        entry = None if hca.exclude else hca.label(d.rdma, 1)
        labels.append((entry.rail, entry.plane) if entry else (-1, -1))
    return RankPlan(rank, node, env, "IB", devices, False, sock, tuple(labels))


def _u(ctx: Ctx, span: tuple[float, float], *key: object) -> float:
    return noise.uniform(ctx.seed, span[0], span[1], "nccl", *key)


def _efficiency(ctx: Ctx, dev: Netdev) -> float:
    if (dev.port, dev.rail) in ctx.model.node(dev.node).dead_halves:
        return 0.003
    return min(1.0, bandwidth.domain_cap(ctx.model, dev.node, dev.rail) / HEALTHY_DOMAIN_GBPS)


def peak_busbw(ctx: Ctx, plans: Sequence[RankPlan], binary: str) -> float:
    """Large-message bus bandwidth (GB/s) the run converges to."""
    topo = ctx.model.cluster.topology
    key = (binary, len(plans), tuple(p.node.name for p in plans))
    through_switch = topo == "switch" and len({p.node.name for p in plans}) > 1
    cpu_forwarding = (
        through_switch and ctx.model.switch is not None and (not ctx.model.switch.hw_offload)
    )
    if any(p.net == "Socket" for p in plans):
        fabric = all(
            p.socket_if is not None and p.socket_if[0] != hardware.MGMT_NETDEV for p in plans
        )
        value = _u(ctx, SOCKET_FABRIC if fabric else SOCKET_MGMT, "socket", *key)
        return min(value, _u(ctx, CPU_FORWARDING, *key)) if cpu_forwarding else value
    if cpu_forwarding:
        return _u(ctx, CPU_FORWARDING, *key)
    if through_switch and ctx.model.pfc_nodes & {p.node.name for p in plans}:
        return _u(ctx, PFC_STALL, *key)
    rails = min(len({d.rail for d in p.devices}) for p in plans)
    eff = min(_efficiency(ctx, d) for p in plans for d in p.devices)
    # The figures are for 200G links; the slowest link the job crosses caps it in proportion.
    rate = min(ctx.model.link_speed_mbps(d.node, d.port) for p in plans for d in p.devices)
    peak = _u(ctx, PEAK.get(topo, PEAK["ring"]), *key) * rate / LINE_RATE_MBPS
    if rails <= 1:
        return min(_u(ctx, SINGLE_RAIL, "single", *key), peak) * eff
    return peak * eff


def factor(collective: str, ranks: int) -> float:
    """busbw / algbw: all_reduce 2(n-1)/n, all_gather and reduce_scatter (n-1)/n."""
    base = (ranks - 1) / ranks
    return 2 * base if collective == "all_reduce" else base
