"""What changes while the simulated cluster runs: GPU load, processes, traffic, link drops.

Link state, temperatures and counters are functions of the static model plus this record of
what ran when, evaluated at a virtual time, so any reading at time t is reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from sparkfabric_sim import noise, thermal
from sparkfabric_sim.hardware import Cable, LaneFault, Netdev, PortRef

if TYPE_CHECKING:
    from sparkfabric_sim.bandwidth import FlowRequest
    from sparkfabric_sim.model import SimCluster
    from sparkfabric_sim.outcome import Outcome

INF = math.inf
FLAP_AFTER_S = 1.0
FLAP_DOWN_S = 0.5
"""A flap (fault link_flap): the link drops 1 s into the first transfer over the cable and
retrains half a second later; mlx5 counts it in link_down_events_phy and logs "Link down"
(shared/samples/kernel-log/dmesg-tail-cx-mlx5-link-down-...)."""
ProcKind = Literal["perftest-server", "iperf3-server", "gpu", "flow", "other"]


@dataclass
class Process:
    """A process started in the background on a node (a server, the GPU load, a stream)."""

    pid: int
    node: str
    argv: tuple[str, ...]
    kind: ProcKind
    start: float
    end: float = INF
    port: int | None = None
    detail: dict[str, object] = field(default_factory=dict)
    outcome: Outcome | None = None
    finished: bool = False


@dataclass
class ActiveFlow:
    request: FlowRequest
    rate_gbps: float
    start: float
    end: float


@dataclass
class Traffic:
    tx_bytes: float = 0.0
    rx_bytes: float = 0.0


class Runtime:
    def __init__(self, model: SimCluster) -> None:
        self.model = model
        self.loads: dict[str, list[list[float]]] = {n: [] for n in model.nodes}
        self.procs: dict[int, Process] = {}
        self.flows: list[ActiveFlow] = []
        # The RDMA flows into each netdev (node, name), in start order: what its counters count.
        self.rdma_into: dict[tuple[str, str], list[ActiveFlow]] = {}
        self.traffic: dict[tuple[str, str], Traffic] = {}
        self.switch_busy_until = -INF
        self._lanes: dict[LaneFault, tuple[tuple[tuple[float, float], ...], thermal.LaneHistory]]
        self._lanes = {}
        self._next_pid = 41000

    # -- processes ----------------------------------------------------------------------------

    def new_pid(self) -> int:
        self._next_pid += 7
        return self._next_pid

    def add(self, proc: Process) -> Process:
        self.procs[proc.pid] = proc
        return proc

    def listener(self, node: str, port: int, kind: ProcKind, t: float) -> Process | None:
        for p in self.procs.values():
            same = p.node == node and p.port == port and p.kind == kind
            if same and not p.finished and p.start <= t < p.end:
                return p
        return None

    def add_flow(self, flow: ActiveFlow) -> None:
        self.flows.append(flow)
        if flow.request.kind == "rdma":
            dst = flow.request.dst
            self.rdma_into.setdefault((dst.node, dst.name), []).append(flow)

    def active_flows(self, t: float) -> list[ActiveFlow]:
        return [f for f in self.flows if f.start <= t < f.end]

    def account(self, flow: FlowRequest, rate_gbps: float, seconds: float) -> None:
        moved = rate_gbps * 1e9 / 8 * seconds
        self.traffic.setdefault((flow.src.node, flow.src.name), Traffic()).tx_bytes += moved
        self.traffic.setdefault((flow.dst.node, flow.dst.name), Traffic()).rx_bytes += moved

    # -- heat ---------------------------------------------------------------------------------

    def gpu_intervals(self, node: str) -> tuple[tuple[float, float], ...]:
        return tuple((s, e) for s, e in self.loads[node])

    def gpu_busy(self, node: str, t: float) -> bool:
        return any(s <= t < e for s, e in self.loads[node])

    def _offset(self, node: str, what: str) -> float:
        return noise.uniform(self.model.seed, -0.6, 0.6, "temp", what, node)

    def gpu_temp(self, node: str, t: float) -> float:
        level = thermal.load_level(self.gpu_intervals(node), t, thermal.GPU.tau_s)
        return thermal.GPU.at(level) + self._offset(node, "gpu")

    def _nic_offset(self, node: str) -> float:
        return self._offset(node, "nic") + self.model.nic_offset_c.get(node, 0.0)

    def nic_temp(self, node: str, t: float) -> float:
        level = thermal.load_level(self.gpu_intervals(node), t, thermal.NIC.tau_s)
        return thermal.NIC.at(level) + self._nic_offset(node)

    def lane_history(self, fault: LaneFault, t: float) -> thermal.LaneHistory:
        key = self.gpu_intervals(fault.node)
        cached = self._lanes.get(fault)
        if cached is None or cached[0] != key or cached[1].until > t:
            cached = (key, thermal.LaneHistory())
            self._lanes[fault] = cached
        return thermal.advance_lane(cached[1], key, t, fault.onset_c, self._nic_offset(fault.node))

    # -- links --------------------------------------------------------------------------------

    def _flaps(self, cable: Cable | None, t: float) -> list[float]:
        """When a flapping cable's link dropped before t: once, FLAP_AFTER_S into the first
        RDMA transfer between two nodes over it (fault link_flap)."""
        if cable is None or cable.id not in self.model.flap_cables:
            return []
        ends = set(cable.ends())
        starts = [
            f.start
            for f in self.flows
            if f.request.kind == "rdma"
            and f.request.src.node != f.request.dst.node
            and {PortRef(d.node, d.port) for d in (f.request.src, f.request.dst)} & ends
        ]
        at = min(starts, default=INF) + FLAP_AFTER_S
        return [at] if at <= t else []

    def port_up(self, node: str, port: int, t: float) -> bool:
        cable = self.model.cable_of(node, port)
        if cable is None or cable.id in self.model.down_cables:
            return False
        if any(at <= t < at + FLAP_DOWN_S for at in self._flaps(cable, t)):
            return False
        switch = self.model.switch
        if cable.leg is not None and switch is not None and switch.leg(cable.leg).auto_negotiation:
            return False
        return not any(h.down_at(t) for h in self._lane_histories(cable, t))

    def _lane_histories(self, cable: Cable | None, t: float) -> list[thermal.LaneHistory]:
        return [
            self.lane_history(fault, t)
            for fault in self.model.lane_faults
            if fault.rate_per_s is None and self.model.cable_of(fault.node, fault.port) is cable
        ]

    def carrier(self, dev: Netdev, t: float) -> bool:
        # A port cluster.yaml leaves empty has carrier too when a cable was put in it.
        return self.port_up(dev.node, dev.port, t)

    def link_down_events(self, node: str, port: int, t: float) -> int:
        cable = self.model.cable_of(node, port)
        flaps = len(self._flaps(cable, t))
        return flaps + sum(h.drops_before(t) for h in self._lane_histories(cable, t))

    def outages(self, node: str, port: int, t: float) -> list[tuple[float, float]]:
        """The port's link outages begun before t (start, end; end may lie ahead): the flap of
        link_flap and the hot marginal lane's drops, each one mlx5 "Link down" and "Link up"."""
        cable = self.model.cable_of(node, port)
        out = [(at, at + FLAP_DOWN_S) for at in self._flaps(cable, t)]
        for h in self._lane_histories(cable, t):
            out += [(start, end) for start, end in h.outages if start <= t]
        return sorted(out)

    def uptime(self, node: str, t: float) -> float:
        """The node's seconds since boot at t: booted a seeded few hours before the run."""
        return noise.uniform(self.model.seed, 3_600.0, 86_400.0, "boot", node) + t

    def down_seconds(self, node: str, port: int, t: float) -> float:
        """Seconds the port's link was down from the marginal lane's outages before t."""
        cable = self.model.cable_of(node, port)
        return sum(h.down_seconds(t) for h in self._lane_histories(cable, t))

    def reachable(self, src: Netdev, dst: Netdev, t: float) -> bool:
        """Layer 2 between two netdevs right now: same node (loopback) or a live path."""
        if src.node == dst.node and src.name == dst.name:
            return True
        if not (self.carrier(src, t) and self.carrier(dst, t)):
            return False
        return dst in self.model.l2_peers(src)

    def path_mtu(self, src: Netdev, dst: Netdev) -> int:
        """The largest IP packet that gets from src's wire to dst's stack."""
        limit = dst.mtu
        switch = self.model.switch
        if switch is not None:
            for leg in self.model.legs_between(src, dst):
                cfg = switch.leg(leg)
                limit = min(limit, cfg.mtu, cfg.l2mtu)
        return limit
