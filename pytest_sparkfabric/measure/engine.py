"""The session's measurement engine: probes run once, concurrently, and are cached.

Tests are many small items (one per rail, link, pair); the work behind them runs in as few
concurrent rounds as the fabric allows, the first time any item needs it. Every item then asserts
on its own cached result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.result import Measured
from pytest_sparkfabric.transport import Job, RunResult, Transport

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink, Plan
    from pytest_sparkfabric.cluster.thresholds import Threshold, ThresholdName
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.switch import SwitchState
    from pytest_sparkfabric.probes.ethtool import EthtoolLink, FecInfo
    from pytest_sparkfabric.probes.ip import IpInterface
    from pytest_sparkfabric.probes.ncclconf import Decided
    from pytest_sparkfabric.probes.ping import PingResult
    from pytest_sparkfabric.probes.sysfs import GidEntry, NetSysctls, PortState

T = TypeVar("T")
QUICK_S = 20.0
REACH_COMMAND = "true"
"""The first command of a session on every node: it only proves the node's shell answers."""
SMALL_PING_B = 56
Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """What one round trip of reads tells about a node's fabric."""

    interfaces: Mapping[str, IpInterface]
    files: Mapping[str, str | None]


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

    bdf: str
    speed_gt_s: float | None
    width: int | None
    max_speed_gt_s: float | None
    max_width: int | None

    @property
    def text(self) -> str:
        speed = f"{self.speed_gt_s:.1f} GT/s" if self.speed_gt_s is not None else "speed ?"
        width = f"x{self.width}" if self.width is not None else "width ?"
        return f"{speed} {width}"


def _not_run(job: Job, line: str) -> RunResult:
    return RunResult(job.node, job.command, 255, "", "", 0.0, transport_error=line)


def result_error(r: RunResult, tool: str) -> str | None:
    """Why a run gave nothing to parse (transport, deadline, missing tool), or None."""
    failure = r.failure()
    if failure:
        return failure
    if r.rc != 0 and not r.stdout.strip():
        err = r.stderr.strip().splitlines()
        return f"{r.node}: {tool} failed (rc {r.rc}): {err[-1] if err else 'no output'}"
    return None


class Fabric:
    def __init__(
        self, cluster: Cluster, transport: Transport, *, progress: Progress | None = None
    ) -> None:
        from pytest_sparkfabric.cluster.limits import resolve
        from pytest_sparkfabric.cluster.plan import plan

        self.cluster = cluster
        self.transport = transport
        self.plan: Plan = plan(cluster)
        self.thresholds: Mapping[ThresholdName, Threshold] = resolve(cluster)
        self.progress: Progress = progress or (lambda _line: None)
        self._cache: dict[object, Any] = {}
        self._locks: dict[object, threading.Lock] = {}
        self._guard = threading.Lock()

    # -- caching --------------------------------------------------------------------------------

    def once(self, key: object, compute: Callable[[], T]) -> T:
        """Compute `key` once per session; concurrent callers wait for the first."""
        with self._guard:
            if key in self._cache:
                return self._cache[key]  # type: ignore[no-any-return]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._cache:
                    return self._cache[key]  # type: ignore[no-any-return]
            value = compute()
            with self._guard:
                self._cache[key] = value
            return value

    @property
    def virtual_time(self) -> bool:
        """Whether time here is modelled (simulator, replay) rather than waited through."""
        return self.cluster.spec.transport != "ssh"

    def detail(self, line: str) -> None:
        """A progress line worth reading only while it takes real time (a round of a phase):
        on a modelled clock the whole phase is over in a moment, and its start line says it."""
        if not self.virtual_time:
            self.progress(line)

    # -- running --------------------------------------------------------------------------------

    def run_all(self, jobs: Sequence[Job]) -> list[RunResult]:
        """Run jobs concurrently; a job on a node found unreachable fails at once with its line."""
        down = self.unreachable()
        if not down:
            return self.transport.run_many(jobs)
        live = [j for j in jobs if j.node not in down]
        done = iter(self.transport.run_many(live) if live else [])
        return [_not_run(j, down[j.node]) if j.node in down else next(done) for j in jobs]

    # -- reachability ---------------------------------------------------------------------------

    def unreachable(self) -> dict[str, str]:
        """Nodes whose shell did not answer the session's first command: node -> the one line
        why (`spark-3: ssh: connection timed out after 10 s`). Asked once, all nodes at once,
        so an unreachable cluster costs one connect timeout, not one per phase."""
        return self.once("reach", self._reach)

    def _reach(self) -> dict[str, str]:
        nodes = [n.name for n in self.cluster.nodes]
        results = self.transport.run_many([Job(n, REACH_COMMAND, QUICK_S) for n in nodes])
        down = {r.node: r.transport_error for r in results if r.transport_error}
        if down:
            self.progress(
                f"{len(down)} of {len(nodes)} nodes not reachable; their tests fail at once: "
                + "; ".join(down.values())
            )
        return down

    def down_line(self, nodes: Iterable[str]) -> str | None:
        """Why some of `nodes` cannot be measured (their reachability lines), or None."""
        down = self.unreachable()
        lines = [down[n] for n in dict.fromkeys(nodes) if n in down]
        return "; ".join(lines) if lines else None

    def reachable(self) -> list[str]:
        """The nodes that answered, in cluster.yaml order."""
        down = self.unreachable()
        return [n.name for n in self.cluster.nodes if n.name not in down]

    # -- configuration facts --------------------------------------------------------------------

    def facts(self, node: str) -> Measured[NodeFacts]:
        """Interfaces (ip -j addr) and every /proc and /sys file the config checks read."""
        return self.once("facts", self._all_facts)[node]

    def _all_facts(self) -> dict[str, Measured[NodeFacts]]:
        from pytest_sparkfabric.probes.ip import build_ip_addr, parse_ip_addr_json
        from pytest_sparkfabric.probes.sysfs import build_read_files, parse_read_files

        nodes = [n.name for n in self.cluster.nodes]
        ip_jobs = [Job(n, build_ip_addr(), QUICK_S) for n in nodes]
        read_jobs = [Job(n, build_read_files(self.fact_paths(n)), QUICK_S) for n in nodes]
        results = self.run_all(ip_jobs + read_jobs)
        out: dict[str, Measured[NodeFacts]] = {}
        for i, n in enumerate(nodes):
            ip_r, read_r = results[i], results[len(nodes) + i]
            err = result_error(ip_r, "ip") or result_error(read_r, "sh")
            if err:
                out[n] = Measured.failed(err)
                continue
            try:
                ifaces = {i.name: i for i in parse_ip_addr_json(ip_r.stdout)}
            except ParseError as exc:
                out[n] = Measured.failed(f"{n}: {exc}")
                continue
            out[n] = Measured.of(NodeFacts(ifaces, parse_read_files(read_r.stdout)))
        return out

    def fact_paths(self, node: str) -> list[str]:
        from pytest_sparkfabric.probes import sysfs

        paths: list[str] = []
        for rail in self.cluster.node(node).rails:
            paths += sysfs.sysctl_paths(rail.netdev).values()
            paths += sysfs.ib_port_paths(rail.rdma).values()
            paths += sysfs.pcie_paths(rail.pci).values()
            paths += sysfs.gid_paths(rail.rdma)
            paths.append(f"/sys/class/infiniband/{rail.rdma}/ports/1/gid_attrs/ndevs/0")
        return list(dict.fromkeys(paths))

    def interface(self, rail: Rail) -> Measured[IpInterface]:
        facts = self.facts(rail.node)
        if facts.error:
            return Measured.failed(facts.error)
        iface = facts.get().interfaces.get(rail.netdev)
        if iface is None:
            return Measured.failed(f"{rail.node}: no interface {rail.netdev} (ip -j addr show)")
        return Measured.of(iface)

    def observed_ipv4(self) -> dict[str, list[tuple[str, str]]]:
        """Every IPv4 address seen on any interface of any node -> [(node, netdev), ...]."""
        seen: dict[str, list[tuple[str, str]]] = {}
        for n in self.cluster.nodes:
            facts = self.facts(n.name)
            if facts.error:
                continue
            for iface in facts.get().interfaces.values():
                for addr in iface.ipv4:
                    seen.setdefault(str(addr.ip), []).append((n.name, iface.name))
        return seen

    def _files(self, node: str) -> Measured[Mapping[str, str | None]]:
        facts = self.facts(node)
        if facts.error:
            return Measured.failed(facts.error)
        return Measured.of(facts.get().files)

    def sysctls(self, rail: Rail) -> Measured[NetSysctls]:
        """Effective arp_ignore/arp_announce/rp_filter (max of all and the netdev) and
        disable_ipv6 of the rail's netdev."""
        from pytest_sparkfabric.probes.sysfs import net_sysctls

        files = self._files(rail.node)
        if files.error:
            return Measured.failed(files.error)
        return Measured.of(net_sysctls(files.get(), rail.netdev))

    def pcie(self, rail: Rail) -> Measured[PcieLink]:
        from pytest_sparkfabric.probes.sysfs import int_value, link_speed_gt_s, pcie_paths

        files = self._files(rail.node)
        if files.error:
            return Measured.failed(files.error)
        values, paths = files.get(), pcie_paths(rail.pci)
        if values.get(paths["current_link_speed"]) is None:
            return Measured.failed(
                f"{rail.node}: no PCIe device {rail.pci} ({paths['current_link_speed']} missing)"
            )
        return Measured.of(
            PcieLink(
                bdf=rail.pci,
                speed_gt_s=link_speed_gt_s(values.get(paths["current_link_speed"])),
                width=int_value(values.get(paths["current_link_width"])),
                max_speed_gt_s=link_speed_gt_s(values.get(paths["max_link_speed"])),
                max_width=int_value(values.get(paths["max_link_width"])),
            )
        )

    def roce(self, rail: Rail) -> Measured[RoceFacts]:
        from pytest_sparkfabric.probes.sysfs import gid_table, ib_port_paths, port_state

        files = self._files(rail.node)
        if files.error:
            return Measured.failed(files.error)
        values, paths = files.get(), ib_port_paths(rail.rdma)
        gids = gid_table(values, rail.rdma)
        ndev0 = values.get(f"/sys/class/infiniband/{rail.rdma}/ports/1/gid_attrs/ndevs/0")
        netdev = ndev0.strip() if ndev0 else next((g.ndev for g in gids if g.ndev), None)
        return Measured.of(
            RoceFacts(
                device=rail.rdma,
                present=values.get(paths["state"]) is not None,
                state=port_state(values.get(paths["state"])),
                phys_state=port_state(values.get(paths["phys_state"])),
                netdev=netdev,
                gids=gids,
            )
        )

    def ethtool(self, rail: Rail) -> Measured[EthtoolLink]:
        return self.once("ethtool", self._all_ethtool)[(rail.node, rail.netdev)]

    def fec(self, rail: Rail) -> Measured[FecInfo]:
        return self.once("fec", self._all_fec)[(rail.node, rail.netdev)]

    def _per_rail(
        self, command: Callable[[Rail], str], parse: Callable[[str], T], tool: str
    ) -> dict[tuple[str, str], Measured[T]]:
        rails = self.cluster.rails
        results = self.run_all([Job(r.node, command(r), QUICK_S) for r in rails])
        out: dict[tuple[str, str], Measured[T]] = {}
        for rail, r in zip(rails, results, strict=True):
            err = result_error(r, tool)
            if err:
                out[(rail.node, rail.netdev)] = Measured.failed(err)
                continue
            try:
                out[(rail.node, rail.netdev)] = Measured.of(parse(r.stdout))
            except ParseError as exc:
                out[(rail.node, rail.netdev)] = Measured.failed(f"{rail.node}: {exc}")
        return out

    def _all_ethtool(self) -> dict[tuple[str, str], Measured[EthtoolLink]]:
        from pytest_sparkfabric.probes.ethtool import build_ethtool, parse_ethtool

        return self._per_rail(lambda r: build_ethtool(r.netdev), parse_ethtool, "ethtool")

    def _all_fec(self) -> dict[tuple[str, str], Measured[FecInfo]]:
        from pytest_sparkfabric.probes.ethtool import build_ethtool_fec, parse_ethtool_fec

        return self._per_rail(lambda r: build_ethtool_fec(r.netdev), parse_ethtool_fec, "ethtool")

    # -- reachability ---------------------------------------------------------------------------

    def ping(self, link: DirectedLink) -> Measured[PingResult]:
        return self.once("pings", self._all_pings)[link.id]

    def _all_pings(self) -> dict[str, Measured[PingResult]]:
        out: dict[str, Measured[PingResult]] = {}
        links = []
        for d in self.plan.directed:
            # Sent from a node that does not answer, a ping cannot run; towards one it can (its
            # kernel answers without a shell) and tells whether the fabric reaches it.
            line = self.down_line((d.src.node,))
            if line:
                out[d.id] = Measured.failed(line)
            else:
                links.append(d)
        if links:
            self.progress(f"jumbo DF pings: {len(links)} directed links at once")
            out.update(self._ping_round(links, self.cluster.mtu - 28))
        return out

    def _ping_round(
        self, links: Sequence[DirectedLink], payload_bytes: int
    ) -> dict[str, Measured[PingResult]]:
        """One DF ping per directed link, all at once, bound to the sending rail's netdev."""
        from pytest_sparkfabric.probes.ping import build_ping, parse_ping

        jobs = [
            Job(
                d.src.node,
                build_ping(d.dst.address.ip, interface=d.src.netdev, payload_bytes=payload_bytes),
                QUICK_S,
            )
            for d in links
        ]
        out: dict[str, Measured[PingResult]] = {}
        for d, r in zip(links, self.run_all(jobs), strict=True):
            failure = r.failure()
            out[d.id] = (
                Measured.failed(failure)
                if failure
                else Measured.of(parse_ping(r.stdout, r.stderr, r.rc))
            )
        return out

    def small_ping(self, link: DirectedLink) -> Measured[PingResult] | None:
        """A default-size ping over a link whose jumbo DF ping failed (None where it passed).

        Tells an MTU on the path (small gets through, jumbo does not) from a link that carries
        nothing; every failed link is retried in one concurrent round."""
        return self.once("small_pings", self._small_pings).get(link.id)

    def _small_pings(self) -> dict[str, Measured[PingResult]]:
        failed = [
            d
            for d in self.plan.directed
            if ((p := self.ping(d)).error or not p.get().ok) and not self.down_line((d.src.node,))
        ]
        if not failed:
            return {}
        self.progress(f"small pings: {len(failed)} links whose jumbo ping failed")
        return self._ping_round(failed, SMALL_PING_B)

    # -- NCCL environment -----------------------------------------------------------------------

    def nccl_env(self, node: str) -> Measured[dict[str, Decided]]:
        return self.once("nccl_env", self._all_nccl_env)[node]

    def _all_nccl_env(self) -> dict[str, Measured[dict[str, Decided]]]:
        from pytest_sparkfabric.measure.nccl_env import conf_reads, decide, read_error

        env = self.cluster.spec.nccl.env
        reads = conf_reads(env)
        nodes = [n.name for n in self.cluster.nodes]
        jobs = [Job(n, rd.command, QUICK_S) for n in nodes for rd in reads]
        results = self.run_all(jobs)
        out: dict[str, Measured[dict[str, Decided]]] = {}
        for i, node in enumerate(nodes):
            mine = results[i * len(reads) : (i + 1) * len(reads)]
            errors = [e for rd, r in zip(reads, mine, strict=True) if (e := read_error(rd, r))]
            out[node] = (
                Measured.failed(errors[0]) if errors else Measured.of(decide(env, reads, mine))
            )
        return out

    # -- the switch -----------------------------------------------------------------------------

    def switch(self) -> Measured[SwitchState]:
        """Everything the switch checks read, in one pass of read-only calls (cached)."""
        return self.once("switch", self._switch)

    def switch_leg_note(self, node: str) -> tuple[str, RuleId | None]:
        """For a node without link: its switch leg (text), and `autoneg_failed` where the switch
        says the leg was left on auto-negotiation (nothing when the switch cannot be read)."""
        spec = self.cluster.spec.switch
        leg = spec.ports.get(node) if spec else None
        if spec is None or leg is None:
            return "", None
        note = f"; its cable lands on switch port {leg}"
        state = self.switch().value
        if state is None:
            return note, None
        port = (state.ethernet.value or {}).get(leg)
        mon = state.monitor.get(leg)
        status = mon.value if mon is not None else None
        failed = status is not None and status.auto_negotiation == "failed"
        if failed or (port is not None and port.auto_negotiation):
            return f"{note}, left on auto-negotiation", "autoneg_failed"
        return note, None

    def _switch(self) -> Measured[SwitchState]:
        from pytest_sparkfabric.measure.switch import read_switch
        from pytest_sparkfabric.transport.switch import SwitchError, make_client

        spec = self.cluster.spec.switch
        if spec is None:
            return Measured.failed("no switch: section in cluster.yaml")
        try:
            source = self.cluster.source
            client = make_client(spec, self.transport, base_dir=source.parent if source else None)
            return Measured.of(read_switch(client, list(spec.ports.values())))
        except SwitchError as exc:
            return Measured.failed(f"switch {spec.host}: {exc}")
