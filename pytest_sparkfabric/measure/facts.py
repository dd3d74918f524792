"""Node facts, all nodes at once: `ip -j addr` and every /proc and /sys file the configuration
checks read (sysctls, RoCE ports and GIDs, PCIe links); and the versions table (firmware, driver,
kernel, GPU driver): one updated box is where a cluster that worked yesterday stops working."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed, result_error
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import sysfs
from pytest_sparkfabric.probes.ethtool import build_ethtool_driver, parse_ethtool_driver
from pytest_sparkfabric.probes.ip import IpInterface, build_ip_addr, parse_ip_addr_json
from pytest_sparkfabric.probes.sysfs import GidEntry, NetSysctls, PortState
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Rail
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

T = TypeVar("T")
NAME: PhaseName = "facts"
VERSIONS: PhaseName = "versions"
Component = Literal["ConnectX firmware", "mlx5 driver", "kernel", "GPU driver"]
COMPONENTS: tuple[Component, ...] = ("ConnectX firmware", "mlx5 driver", "kernel", "GPU driver")


@dataclass(frozen=True, slots=True)
class NodeFacts:
    interfaces: Mapping[str, IpInterface]
    files: Mapping[str, str | None]


@dataclass(frozen=True, slots=True)
class Facts:
    nodes: Mapping[str, Measured[NodeFacts]]
    ipv4: Mapping[str, tuple[tuple[str, str], ...]]
    """Every IPv4 address seen on any interface of any node -> ((node, netdev), ...)."""


@dataclass(frozen=True, slots=True)
class RoceFacts:
    """A rail's RoCE device as sysfs shows it: port state, bound netdev, populated GIDs."""

    device: str
    present: bool
    state: PortState
    phys_state: PortState
    netdev: str | None
    gids: tuple[GidEntry, ...]

    @property
    def active(self) -> bool:
        return self.state.name == "ACTIVE"

    @property
    def link_up(self) -> bool:
        return (self.phys_state.name or "").replace("_", "").lower() == "linkup"


@dataclass(frozen=True, slots=True)
class PcieLink:
    """One PCIe half of the NIC (/sys/bus/pci/devices/<bdf>/current_link_*)."""

    speed_gt_s: float | None
    width: int | None
    max_speed_gt_s: float | None
    max_width: int | None

    @property
    def text(self) -> str:
        speed = f"{self.speed_gt_s:.1f} GT/s" if self.speed_gt_s is not None else "speed ?"
        width = f"x{self.width}" if self.width is not None else "width ?"
        return f"{speed} {width}"


def fact_paths(cluster: Cluster, node: str) -> list[str]:
    """Every /proc and /sys file read on `node`, in a stable order, each once."""
    paths: list[str] = []
    for rail in cluster.node(node).rails:
        paths += sysfs.sysctl_paths(rail.netdev).values()
        paths += sysfs.ib_port_paths(rail.rdma).values()
        paths += sysfs.pcie_paths(rail.pci).values()
        paths += sysfs.gid_paths(rail.rdma)
        paths.append(_ndev0(rail.rdma))
    return list(dict.fromkeys(paths))


def _ndev0(rdma: str) -> str:
    return f"/sys/class/infiniband/{rdma}/ports/1/gid_attrs/ndevs/0"


def measure(fabric: Fabric) -> Facts:
    nodes = [n.name for n in fabric.cluster.nodes]
    reads = [sysfs.build_read_files(fact_paths(fabric.cluster, n)) for n in nodes]
    results = fabric.run_all(
        [Job(n, build_ip_addr(), QUICK_S) for n in nodes]
        + [Job(n, read, QUICK_S) for n, read in zip(nodes, reads, strict=True)]
    )
    out: dict[str, Measured[NodeFacts]] = {}
    # Once here: every address check of every rail asks who else holds its address.
    seen: dict[str, list[tuple[str, str]]] = {}
    for n, ip_r, read_r in zip(nodes, results[: len(nodes)], results[len(nodes) :], strict=True):
        ip = parsed(ip_r, "ip", parse_ip_addr_json)
        if err := result_error(ip_r, "ip") or result_error(read_r, "sh") or ip.error:
            out[n] = Measured.failed(err)
            continue
        interfaces = {i.name: i for i in ip.get()}
        out[n] = Measured.of(NodeFacts(interfaces, sysfs.parse_read_files(read_r.stdout)))
        for iface in interfaces.values():
            for addr in iface.ipv4:
                seen.setdefault(str(addr.ip), []).append((n, iface.name))
    return Facts(out, {ip: tuple(owners) for ip, owners in seen.items()})


# -- accessors ----------------------------------------------------------------------------------


def node(fabric: Fabric, name: str) -> Measured[NodeFacts]:
    """Interfaces (ip -j addr) and every /proc and /sys file the config checks read."""
    return fabric.phase(NAME, measure).nodes[name]


def interface(fabric: Fabric, rail: Rail) -> Measured[IpInterface]:
    facts = node(fabric, rail.node)
    if facts.error:
        return Measured.failed(facts.error)
    iface = facts.get().interfaces.get(rail.netdev)
    if iface is None:
        return Measured.failed(f"{rail.node}: no interface {rail.netdev} (ip -j addr show)")
    return Measured.of(iface)


def observed_ipv4(fabric: Fabric) -> Mapping[str, tuple[tuple[str, str], ...]]:
    """Every IPv4 address seen on any interface of any node -> ((node, netdev), ...)."""
    return fabric.phase(NAME, measure).ipv4


def _from_files(
    fabric: Fabric, rail: Rail, read: Callable[[Mapping[str, str | None]], Measured[T]]
) -> Measured[T]:
    facts = node(fabric, rail.node)
    return Measured.failed(facts.error) if facts.error else read(facts.get().files)


def sysctls(fabric: Fabric, rail: Rail) -> Measured[NetSysctls]:
    """Effective arp_ignore/arp_announce/rp_filter (max of all and the netdev) and
    disable_ipv6 of the rail's netdev."""
    return _from_files(fabric, rail, lambda f: Measured.of(sysfs.net_sysctls(f, rail.netdev)))


def pcie(fabric: Fabric, rail: Rail) -> Measured[PcieLink]:
    return _from_files(fabric, rail, lambda values: _pcie(rail, values))


def _pcie(rail: Rail, values: Mapping[str, str | None]) -> Measured[PcieLink]:
    paths = sysfs.pcie_paths(rail.pci)
    if values.get(where := paths["current_link_speed"]) is None:
        return Measured.failed(f"{rail.node}: no PCIe device {rail.pci} ({where} missing)")
    speed, top = (
        sysfs.link_speed_gt_s(values.get(paths[f"{k}_link_speed"])) for k in ("current", "max")
    )
    width, widest = (
        sysfs.int_value(values.get(paths[f"{k}_link_width"])) for k in ("current", "max")
    )
    return Measured.of(PcieLink(speed, width, top, widest))


def roce(fabric: Fabric, rail: Rail) -> Measured[RoceFacts]:
    return _from_files(fabric, rail, lambda values: _roce(rail, values))


def _roce(rail: Rail, values: Mapping[str, str | None]) -> Measured[RoceFacts]:
    paths = sysfs.ib_port_paths(rail.rdma)
    gids = sysfs.gid_table(values, rail.rdma)
    ndev0 = values.get(_ndev0(rail.rdma))
    netdev = ndev0.strip() if ndev0 else next((g.ndev for g in gids if g.ndev), None)
    state, phys = (sysfs.port_state(values.get(paths[k])) for k in ("state", "phys_state"))
    present = values.get(paths["state"]) is not None
    return Measured.of(RoceFacts(rail.rdma, present, state, phys, netdev, gids))


# -- versions -----------------------------------------------------------------------------------


Versions = Mapping[str, Mapping[Component, Measured[str]]]
"""By node, by component: the version string, or why it could not be read."""


def _first_line(r: RunResult, tool: str) -> Measured[str]:
    if err := result_error(r, tool):
        return Measured.failed(err)
    value = r.stdout.strip().splitlines()[0].strip() if r.stdout.strip() else ""
    return Measured.of(value) if value else Measured.failed(f"{r.node}: {tool} printed nothing")


def _driver(r: RunResult) -> dict[Component, Measured[str]]:
    info = (got := parsed(r, "ethtool -i", parse_ethtool_driver)).value
    fields: dict[Component, tuple[str, str | None]] = {
        "ConnectX firmware": ("firmware-version", info.firmware_version if info else None),
        "mlx5 driver": ("version", info.version if info else None),
    }
    if info is None:
        return {c: Measured.failed(got.error or r.node) for c in fields}
    return {
        c: Measured.of(v) if v else Measured.failed(f"{r.node}: ethtool -i has no {key}")
        for c, (key, v) in fields.items()
    }


GPU_DRIVER_COMMAND = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]


def measure_versions(fabric: Fabric) -> Versions:
    nodes = [n for n in fabric.cluster.nodes if n.rails]
    jobs: list[Job] = []
    for n in nodes:
        jobs += [
            Job(n.name, build_ethtool_driver(n.rails[0].netdev), QUICK_S),
            Job(n.name, shell.join(["uname", "-r"]), QUICK_S),
            Job(n.name, shell.join(GPU_DRIVER_COMMAND), QUICK_S),
        ]
    results = iter(fabric.run_all(jobs))
    return {
        n.name: {
            **_driver(next(results)),
            "kernel": _first_line(next(results), "uname -r"),
            "GPU driver": _first_line(next(results), "nvidia-smi"),
        }
        for n in nodes
    }


def versions(fabric: Fabric) -> Versions:
    """Every node's versions (all nodes' reads in one round)."""
    return fabric.phase(VERSIONS, measure_versions)


def odd_ones(values: Mapping[str, str]) -> dict[str, str]:
    """Nodes whose value differs from the one most nodes share (with a tie, from the first
    node's); empty when all agree."""
    if len(set(values.values())) <= 1:
        return {}
    counts = Counter(values.values())
    top = max(counts.values())
    first = next(v for v in values.values() if counts[v] == top)
    return {n: v for n, v in values.items() if v != first}
