"""What the diagnosers read (a session's measurements or saved tool outputs) and what they say:
`measure.witness` builds an `Evidence` from a session, `diagnosis.explain` from saved files;
`diagnose()` turns it into `Finding`s, each naming its rule, where, and the numbers that show it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_sparkfabric.diagnosis.miscabling import Mistake
from pytest_sparkfabric.diagnosis.rules import Rule
from pytest_sparkfabric.objects import Obj, meet

# The signatures of DOMAIN.md §4-5 (reference figures) and §8 (symptom table), each with room
# around it so that a run's spread does not flip a diagnosis.

THROTTLED_MAX_GBPS = 50.0
"""A loopback below this is the throttled-NIC signature (§4-5: 8-25 Gb/s; healthy ~106)."""
LOW_RDMA_MAX_GBPS = 30.0
"""One rail node to node at or below this: software forwarding (~10) or a PFC stall (~5) (§5)."""
DEAD_RAIL_MAX_GBPS = 5.0
"""A rail at or below this next to a live one carries (almost) nothing (§5: one half ~0)."""
LIVE_RAIL_MIN_GBPS = 50.0
"""A rail at or above this is live: half of the healthy ~100 Gb/s per rail (§5)."""
TCP_FINE_MIN_GBPS = 50.0
"""TCP (both halves, parallel streams) this fast is not behind a software-forwarding switch
(§5: software forwarding ~10 Gb/s on every transport)."""
TCP_SLOW_MAX_GBPS = 40.0
"""TCP at or below this crawls like software forwarding (~10) rather than one half (~100) (§5)."""
SWITCH_CPU_BUSY_PCT = 50.0
"""RouterOS `cpu-load` at or above this: the switch CPU forwards (§7: high cpu-load)."""
NCCL_CRAWL_MAX_GBYTES_S = 1.0
"""NCCL busbw below this over IB: switch CPU forwarding (§5: 0.46 GB/s; §8: NCCL < 1 GB/s)."""
SINGLE_HCA_GBYTES_S = (11.5, 16.5)
"""NCCL busbw around 13.9 GB/s: one rail of the port (§5), when the log does not say."""


@dataclass(frozen=True, slots=True)
class Site:
    """Where something was seen: a label for people and the nodes it concerns."""

    where: str
    nodes: tuple[str, ...] = ()
    objects: tuple[Obj, ...] = ()


@dataclass(frozen=True, slots=True)
class Rate:
    """One bandwidth figure. `gbps` None: the run gave no number (`error` says why)."""

    where: str
    nodes: tuple[str, ...]
    gbps: float | None
    label: str = ""
    error: str | None = None
    objects: tuple[Obj, ...] = ()


@dataclass(frozen=True, slots=True)
class PairRates:
    """The rails of one node pair (or one port) measured at the same time."""

    where: str
    nodes: tuple[str, ...]
    rails: tuple[Rate, ...]
    devices: tuple[str, ...] = ()
    """The RoCE devices of the cabled port, for a fix that names them."""
    objects: tuple[Obj, ...] = ()

    @property
    def total_gbps(self) -> float | None:
        values = [r.gbps for r in self.rails if r.gbps is not None]
        return sum(values) if values else None


@dataclass(frozen=True, slots=True)
class NcclEvidence:
    where: str
    completed: bool
    busbw_gbytes_s: float | None
    networks: tuple[str, ...] = ()
    """`Using network X` as printed (IB, Socket, IBext_v8, ...)."""
    socket: bool = False
    """A `NET/Socket : Using` or `NET/IB : No device found` line."""
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Rank (label) -> the RoCE devices on its `NET/IB : Using` line."""
    expected: tuple[str, ...] = ()
    """The devices every rank should list (both RoCE devices of the cabled port)."""
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """What a session (or a pile of saved outputs) measured; each part may be missing."""

    loopback: tuple[Rate, ...] = ()
    rdma: tuple[Rate, ...] = ()
    pairs: tuple[PairRates, ...] = ()
    tcp: tuple[PairRates, ...] = ()
    nccl: NcclEvidence | None = None
    no_link: tuple[Site, ...] = ()
    switch_cpu_load_pct: float | None = None
    narrow_pcie: tuple[Site, ...] = ()
    duplicate_ips: tuple[Site, ...] = ()
    short_legs: tuple[Site, ...] = ()
    """Switch legs whose mtu or l2mtu is below the cluster's RoCE packet (issue 14)."""
    shared: tuple[Obj, ...] = ()
    """What every flow crosses (the switch), blamed for settings of the whole fabric."""
    miscabled: tuple[Mistake, ...] = ()
    """The physical mistakes of the cabling as LLDP found it (`diagnosis.miscabling`)."""
    slow_links: tuple[Site, ...] = ()
    """Rails whose link is up below its declared speed (ethtool), `where` saying both."""
    launch: tuple[Site, ...] = ()
    """Nodes whose NCCL/Open MPI interface settings cannot work, `where` saying why."""
    refused: tuple[Site, ...] = ()
    """Nodes whose test servers listened but clients could not connect while pings passed."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that the evidence matches: where, the numbers that show it, and what to do."""

    rule: Rule
    where: str
    nodes: tuple[str, ...]
    evidence: str
    fix: str = ""
    certain: bool = True
    objects: tuple[Obj, ...] = ()
    """What it blames (a rail, a cable, a node, ...); empty: nothing narrower than `nodes`."""
    cause: str = ""
    """The cause where this evidence says more than the rule's general one."""

    @property
    def fix_text(self) -> str:
        return self.fix or self.rule.fix

    @property
    def cause_text(self) -> str:
        return self.cause or self.rule.cause

    def concerns(self, nodes: Iterable[str]) -> bool:
        wanted = set(nodes)
        return not self.nodes or not wanted or not wanted.isdisjoint(self.nodes)

    def about(self, path: Sequence[Obj]) -> bool:
        """Whether it blames an object on `path` (an empty path: the whole cluster)."""
        if self.objects:
            return meet(self.objects, path)
        return self.concerns({s.node for o in path for s in o.spots if s.node is not None})

    def render(self, head: str | None = None) -> str:
        head = head or ("Likely cause" if self.certain else "Possible cause")
        return (
            f"{head}: {self.cause_text} ({self.where}: {self.evidence}).\n"
            f"Fix: {self.fix_text.rstrip('.')}."
        )
