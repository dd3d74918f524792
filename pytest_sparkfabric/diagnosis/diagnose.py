"""Symptom -> cause -> fix, as data (DOMAIN.md §8).

A rule says what it explains, the likely cause and the fix. Tests name the rule their check
belongs to; `diagnose()` picks rules from a session's evidence for measurements whose cause is
not evident from the check alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    symptom: str
    cause: str
    fix: str
    source: str = "docs/diagnosis.md"


_TABLE = (
    Rule(
        "link_down",
        "a cabled port has no carrier / RoCE port not ACTIVE",
        "no link on the cable: unplugged, damaged, or the far end (switch leg) is down",
        "reseat or replace the cable; on a switch check the leg is up (speed forced, see autoneg)",
    ),
    Rule(
        "admin_down",
        "a cabled rail netdev is administratively down",
        "the interface was never brought up (no network config for it, or it was set down)",
        "`ip link set dev <netdev> up` now, and give it a network config (netplan) so it stays up",
    ),
    Rule(
        "autoneg_failed",
        "cable detected, legs down, auto-negotiation failed",
        "the switch's QSFP56-DD port does not auto-negotiate 2x200G",
        "on the switch: set auto-negotiation=no speed=200G-baseCR4 on lanes 1 and 5 of the port",
    ),
    Rule(
        "speed_degraded",
        "link up below 200000Mb/s",
        "the link negotiated a lower speed (switch port not forced to 200G, or a slower cable)",
        "force 200G-baseCR4 on the switch leg; use a 200G QSFP56/QSFP112 cable",
    ),
    Rule(
        "fec_not_rs",
        "active FEC is not RS",
        "the link runs without Reed-Solomon FEC, so pre-FEC errors become lost frames",
        "set FEC to RS (fec91) on both ends; on RouterOS `fec-mode=fec91`",
    ),
    Rule(
        "pcie_degraded",
        "a PCIe half below 32.0 GT/s x4",
        "the NIC's PCIe link trained narrower or slower (seen at x2 on some GX10 units)",
        "reboot; if it persists, reseat / have the unit serviced: that half caps near 50 Gb/s",
    ),
    Rule(
        "rdma_netdev_mismatch",
        "RoCE device not bound to the expected netdev",
        "the RoCE device of a rail maps to another interface than the Spark standard names",
        "check the rail's netdev/rdma names in cluster.yaml (long form) or the NIC firmware",
    ),
    Rule(
        "mtu_local",
        "DF ping refused locally: message too long",
        "the sending interface's MTU is smaller than the cluster MTU",
        "set MTU 9000 on the fabric netdev (netplan/nmcli), on every node",
    ),
    Rule(
        "mtu_path",
        "DF jumbo ping lost on the way",
        "an MTU smaller than the cluster's further along the path: the peer or the switch port",
        "MTU 9000 end to end: the peer netdev, and on the switch mtu=9000 l2mtu=9216 per port",
    ),
    Rule(
        "mtu_mismatch",
        "a netdev's MTU differs from the cluster MTU",
        "the interface was configured with another MTU",
        "set the MTU in the node's network config (netplan `mtu: 9000`) and re-apply",
    ),
    Rule(
        "unreachable_rail",
        "rail peer does not answer",
        "no path on this rail: link down, wrong address or subnet, or a filter dropping it",
        "check the link, the addresses against cluster.yaml, and rp_filter on both ends",
    ),
    Rule(
        "address_mismatch",
        "a rail netdev carries other IPv4 addresses than cluster.yaml says",
        "the node's network config differs from the plan",
        "give each rail exactly its planned address (netplan) or update cluster.yaml",
    ),
    Rule(
        "duplicate_ip",
        "one address on two interfaces",
        "duplicate fabric IPs: ARP confusion and loss",
        "give every rail interface its own IP, one subnet per rail",
    ),
    Rule(
        "arp_flux",
        "two interfaces of a node in one subnet without ARP sysctls",
        "ARP flux: the node answers ARP for one rail on the other",
        "sysctl net.ipv4.conf.all.arp_ignore=1 arp_announce=2 (or one subnet per rail)",
    ),
    Rule(
        "rp_filter_strict",
        "rp_filter = 1 on a fabric netdev",
        "strict reverse-path filtering drops RoCE that arrives on the other rail",
        "sysctl net.ipv4.conf.all.rp_filter=2 and net.ipv4.conf.<if>.rp_filter=2 (or 0)",
    ),
    Rule(
        "ipv6_enabled",
        "IPv6 on for a fabric netdev",
        "IPv6 addresses shift the RoCE GID table, so GID indices differ between boots and nodes",
        "sysctl net.ipv6.conf.<if>.disable_ipv6=1 for every fabric netdev (persist it)",
    ),
    Rule(
        "gid_missing",
        "no RoCE v2 GID carries the rail's IPv4 address",
        "the RoCE device has no usable IPv4 GID: address missing or not yet populated",
        "assign the rail's address; check `show_gids`; RDMA uses the RoCE v2 IPv4 GID",
    ),
    Rule(
        "nccl_socket",
        "NCCL far below iperf3; logs say Socket",
        "NCCL fell back to TCP: NCCL_NET=Socket or NCCL_IB_DISABLE=1 is set",
        "remove NCCL_NET=Socket / NCCL_IB_DISABLE from nccl.conf and the job environment",
    ),
    Rule(
        "nccl_single_hca",
        "NCCL ~13.9 GB/s, one device in the NET/IB line",
        "NCCL_IB_HCA names one rail (one PCIe half) of the port",
        "list both RoCE devices of the cabled port, e.g. NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1",
    ),
    Rule(
        "nccl_wrong_hca",
        "NCCL_IB_HCA selects none of the cabled port's RoCE devices",
        "NCCL_IB_HCA names devices of the other (uncabled) port, or misspells them",
        "list both RoCE devices of the cabled port, e.g. NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1",
    ),
    Rule(
        "nic_throttled",
        "~13 Gb/s even in loopback, link says 200G",
        "the NIC is throttled or stale after a cable swap or kernel update",
        "reboot both boxes with cables attached; if it persists, unplug power for 60 s",
    ),
    Rule(
        "half_port",
        "~100-110 Gb/s per port on a clean 200G link",
        "only one of the port's two PCIe halves carries traffic",
        "drive both netdevs / both RoCE devices (NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1)",
    ),
    Rule(
        "switch_cpu_forwarding",
        "~10 Gb/s on every transport, NCCL < 1 GB/s, switch CPU busy",
        "the switch forwards in software (unused sub-ports in the bridge, or a second bridge)",
        "remove unused breakout sub-ports from the bridge; one bridge; confirm hw-offload (H)",
    ),
    Rule(
        "pfc_stall",
        "connections come up, RDMA data stalls (~5 Gb/s single flow)",
        "PFC / trust settings disagree between switch and hosts",
        "disable PFC on switch (trust-l3=ignore pfc=disabled) and hosts (mlnx_qos --pfc 0,...)",
    ),
    Rule(
        "marginal_cable",
        "one lane's error rate ~1000x the others under heat",
        "a marginal cable: it will drop the link under load",
        "replace the cable before it drops the link; re-run the soak with the new one",
    ),
    Rule(
        "ber_high",
        "pre-FEC BER above the limit",
        "a noisy link: cable, connector or module at the edge of what FEC corrects",
        "reseat, then replace the cable; keep it out of service until a soak passes",
    ),
    Rule(
        "post_fec_errors",
        "symbol/CRC errors or link-down events grew during the test",
        "errors FEC could not correct: traffic was lost",
        "replace the cable; check module temperatures and airflow",
    ),
    Rule(
        "egress_rate_cap",
        "switch egress-rate-queue set",
        "an egress rate limit caps the port (a queue cap halves a 200G port)",
        "remove egress-rate-queueN on the fabric ports",
    ),
)

RULES: dict[str, Rule] = {r.id: r for r in _TABLE}


# -- diagnosis from evidence -------------------------------------------------------------------
#
# The numbers below are the signatures of DOMAIN.md §4-5 with room around them: loopback
# healthy ~106 Gb/s, throttled 8-25; one rail node to node healthy 92-112, switch CPU ~10, PFC
# stall ~5; a dead half ~0 next to a live one ~100; NCCL one rail ~13.9 GB/s, switch CPU 0.46.

THROTTLED_MAX_GBPS = 50.0
"""A loopback below this is the throttled-NIC signature (8-25 Gb/s; healthy ~106)."""
LOW_RDMA_MAX_GBPS = 30.0
"""One rail node to node at or below this: software forwarding (~10) or a PFC stall (~5)."""
DEAD_RAIL_MAX_GBPS = 5.0
"""A rail at or below this next to a live one carries (almost) nothing."""
LIVE_RAIL_MIN_GBPS = 50.0
TCP_FINE_MIN_GBPS = 50.0
"""TCP (both halves, parallel streams) this fast is not behind a software-forwarding switch."""
TCP_SLOW_MAX_GBPS = 40.0
SWITCH_CPU_BUSY_PCT = 50.0
NCCL_CRAWL_MAX_GBYTES_S = 1.0
SINGLE_HCA_GBYTES_S = (11.5, 16.5)
"""NCCL busbw around 13.9 GB/s: one rail of the port (when the log does not say)."""


@dataclass(frozen=True, slots=True)
class Site:
    """Where something was seen: a label for people and the nodes it concerns."""

    where: str
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rate:
    """One bandwidth figure. `gbps` None: the run gave no number (`error` says why)."""

    where: str
    nodes: tuple[str, ...]
    gbps: float | None
    label: str = ""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PairRates:
    """The rails of one node pair (or one port) measured at the same time."""

    where: str
    nodes: tuple[str, ...]
    rails: tuple[Rate, ...]
    devices: tuple[str, ...] = ()
    """The RoCE devices of the cabled port, for a fix that names them."""

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


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that the evidence matches: where, the numbers that show it, and what to do."""

    rule: Rule
    where: str
    nodes: tuple[str, ...]
    evidence: str
    fix: str = ""
    certain: bool = True

    @property
    def fix_text(self) -> str:
        return self.fix or self.rule.fix

    def concerns(self, nodes: Iterable[str]) -> bool:
        wanted = set(nodes)
        return not self.nodes or not wanted or bool(wanted & set(self.nodes))

    def render(self, head: str | None = None) -> str:
        head = head or ("Likely cause" if self.certain else "Possible cause")
        return (
            f"{head}: {self.rule.cause} ({self.where}: {self.evidence}).\n"
            f"Fix: {self.fix_text.rstrip('.')}."
        )


def _gb(value: float) -> str:
    return f"{value:.1f} Gb/s"


def _loopbacks(ev: Evidence) -> dict[str, list[Rate]]:
    out: dict[str, list[Rate]] = {}
    for r in ev.loopback:
        if r.gbps is not None:
            out.setdefault(r.nodes[0] if r.nodes else r.where, []).append(r)
    return out


def _throttled(ev: Evidence) -> dict[str, list[Rate]]:
    """Boxes whose loopback crawls: some rail in the throttled band, or every rail ~0."""
    out: dict[str, list[Rate]] = {}
    for node, rates in _loopbacks(ev).items():
        band = [r for r in rates if DEAD_RAIL_MAX_GBPS < (r.gbps or 0.0) < THROTTLED_MAX_GBPS]
        dead = [r for r in rates if (r.gbps or 0.0) <= DEAD_RAIL_MAX_GBPS]
        if band or len(dead) == len(rates):
            out[node] = band or dead
    return out


def _dead_halves(ev: Evidence) -> dict[str, tuple[list[Rate], list[Rate]]]:
    """Boxes where one rail carries ~nothing even in loopback while another runs: (dead, live)."""
    out: dict[str, tuple[list[Rate], list[Rate]]] = {}
    for node, rates in _loopbacks(ev).items():
        dead = [r for r in rates if (r.gbps or 0.0) <= DEAD_RAIL_MAX_GBPS]
        live = [r for r in rates if (r.gbps or 0.0) >= LIVE_RAIL_MIN_GBPS]
        if dead and live:
            out[node] = (dead, live)
    return out


def _loopback_known(ev: Evidence, node: str) -> bool:
    return any(r.gbps is not None and node in r.nodes for r in ev.loopback)


def _down_nodes(ev: Evidence) -> set[str]:
    return {n for s in ev.no_link for n in s.nodes}


def _link_down(ev: Evidence) -> list[Finding]:
    if not ev.no_link:
        return []
    where = ", ".join(s.where for s in ev.no_link)
    nodes = tuple(dict.fromkeys(n for s in ev.no_link for n in s.nodes))
    return [Finding(RULES["link_down"], where, nodes, "no carrier (ethtool: Link detected: no)")]


def _nic_throttled(ev: Evidence) -> list[Finding]:
    out = []
    for node, rates in _throttled(ev).items():
        seen = ", ".join(f"{r.label or r.where} {_gb(r.gbps or 0.0)}" for r in rates)
        certain = any((r.gbps or 0.0) > DEAD_RAIL_MAX_GBPS for r in rates)
        out.append(
            Finding(
                RULES["nic_throttled"],
                node,
                rates[0].nodes[:1],
                f"loopback {seen} with no cable involved; healthy ~106 Gb/s",
                certain=certain,
            )
        )
    return out


def _live_and_dead(p: PairRates) -> bool:
    """One rail of the pair carries ~nothing while another runs near line rate."""
    live = any(r.gbps is not None and r.gbps >= LIVE_RAIL_MIN_GBPS for r in p.rails)
    dead = any(r.gbps is not None and r.gbps <= DEAD_RAIL_MAX_GBPS for r in p.rails)
    return live and dead


def _half_port(ev: Evidence) -> list[Finding]:
    out: list[Finding] = []
    down = _down_nodes(ev)
    throttled = set(_throttled(ev))
    halves = _dead_halves(ev)
    for node, (dead, live) in halves.items():
        seen = ", ".join(f"{r.label or r.where} {_gb(r.gbps or 0.0)}" for r in dead + live)
        hca = ",".join(r.label for r in sorted(dead + live, key=lambda r: r.where) if r.label)
        out.append(
            Finding(
                RULES["half_port"],
                node,
                dead[0].nodes[:1],
                f"loopback {seen}: one half carries nothing even inside the box",
                f"drive both netdevs / both RoCE devices (NCCL_IB_HCA={hca})" if hca else "",
            )
        )
    for kind, groups in (("RDMA", ev.pairs), ("TCP", ev.tcp)):
        for p in groups:
            if not _live_and_dead(p) or set(p.nodes) & (down | throttled | set(halves)):
                continue
            if any(f.where == p.where for f in out):
                continue
            hca = f" (NCCL_IB_HCA={','.join(p.devices)})" if p.devices else ""
            seen = ", ".join(f"{r.label or r.where} {_gb(r.gbps or 0.0)}" for r in p.rails)
            out.append(
                Finding(
                    RULES["half_port"],
                    p.where,
                    p.nodes,
                    f"{kind} {seen}",
                    f"drive both netdevs / both RoCE devices{hca}" if hca else "",
                )
            )
    return out


def _slow_rails(ev: Evidence) -> list[Rate]:
    """Rails that crawl on nodes whose NIC is not throttled, outside a half-used port."""
    rates = list(ev.rdma) or [r for p in ev.pairs for r in p.rails]
    skip = set(_throttled(ev)) | _down_nodes(ev) | set(_dead_halves(ev))
    half = {p.nodes for p in ev.pairs if _live_and_dead(p)}
    return [
        r
        for r in rates
        if r.gbps is not None
        and r.gbps <= LOW_RDMA_MAX_GBPS
        and not set(r.nodes) & skip
        and tuple(r.nodes) not in half
    ]


def _tcp_between(ev: Evidence, nodes: set[str]) -> list[PairRates]:
    return [p for p in ev.tcp if p.total_gbps is not None and set(p.nodes) <= nodes]


def _summary(rates: list[Rate]) -> str:
    values = sorted(r.gbps or 0.0 for r in rates)
    if len(values) == 1:
        return f"RDMA {rates[0].label or rates[0].where} {_gb(values[0])}"
    span = (
        f"{values[0]:.1f}"
        if f"{values[0]:.1f}" == f"{values[-1]:.1f}"
        else (f"{values[0]:.1f}-{values[-1]:.1f}")
    )
    return f"RDMA {len(values)} rails at {span} Gb/s"


def _switch_or_pfc(ev: Evidence) -> list[Finding]:
    slow = _slow_rails(ev)
    nodes = tuple(sorted({n for r in slow for n in r.nodes}))
    tcp = _tcp_between(ev, set(nodes)) if slow else list(ev.tcp)
    tcp_slow = [p for p in tcp if (p.total_gbps or 0.0) <= TCP_SLOW_MAX_GBPS]
    tcp_fine = [p for p in tcp if (p.total_gbps or 0.0) >= TCP_FINE_MIN_GBPS]
    cpu = ev.switch_cpu_load_pct
    busy = cpu is not None and cpu >= SWITCH_CPU_BUSY_PCT
    nccl = ev.nccl
    crawl = (
        nccl is not None
        and not nccl.socket
        and nccl.busbw_gbytes_s is not None
        and nccl.busbw_gbytes_s < NCCL_CRAWL_MAX_GBYTES_S
    )
    sw, pfc = RULES["switch_cpu_forwarding"], RULES["pfc_stall"]
    where = "the switch" if not nodes else "between " + ", ".join(nodes)
    cpu_text = f"; switch cpu-load {cpu:.0f}%" if busy and cpu is not None else ""
    if slow and tcp_slow:
        tcp_text = ", ".join(f"{p.where} {_gb(p.total_gbps or 0.0)}" for p in tcp_slow[:3])
        seen = f"{_summary(slow)} and TCP too ({tcp_text}){cpu_text}"
        return [Finding(sw, where, nodes, seen)]
    if slow and tcp_fine:
        tcp_text = ", ".join(f"{p.where} {_gb(p.total_gbps or 0.0)}" for p in tcp_fine[:3])
        seen = f"{_summary(slow)} while TCP between the same nodes is fine ({tcp_text})"
        return [Finding(pfc, where, nodes, seen)]
    if slow and busy:
        return [Finding(sw, where, nodes, f"{_summary(slow)}{cpu_text}")]
    if slow:
        unknown = [n for n in nodes if not _loopback_known(ev, n)]
        tell = "measure TCP (iperf3 -P on both halves) to tell them apart"
        out = [
            Finding(sw, where, nodes, f"{_summary(slow)}; {tell}", certain=False),
            Finding(pfc, where, nodes, f"{_summary(slow)}; {tell}", certain=False),
        ]
        if unknown:
            seen = f"{_summary(slow)}; no loopback measured on {', '.join(unknown)}"
            out.insert(0, Finding(RULES["nic_throttled"], where, nodes, seen, certain=False))
        return out
    if tcp_slow and (busy or not ev.rdma):
        tcp_text = ", ".join(f"{p.where} {_gb(p.total_gbps or 0.0)}" for p in tcp_slow[:3])
        return [Finding(sw, "the switch", (), f"TCP {tcp_text}{cpu_text}", certain=busy)]
    if crawl and nccl is not None:
        seen = f"NCCL {nccl.busbw_gbytes_s:g} GB/s over IB{cpu_text}"
        return [Finding(sw, "the switch", (), seen, certain=busy)]
    return []


def _nccl_socket(ev: Evidence) -> list[Finding]:
    n = ev.nccl
    if n is None or not (n.socket or "Socket" in n.networks):
        return []
    said = "'Using network Socket'" if "Socket" in n.networks else "NET/Socket, no IB device"
    busbw = f", busbw {n.busbw_gbytes_s:g} GB/s" if n.busbw_gbytes_s is not None else ""
    seen = f"NCCL_DEBUG=INFO says {said}{busbw}"
    if ev.no_link:
        # With the RoCE ports down NCCL finds no IB device and falls back by itself.
        seen += "; with links down that may be the fallback, not a setting"
        return [Finding(RULES["nccl_socket"], n.where, (), seen, certain=False)]
    return [Finding(RULES["nccl_socket"], n.where, (), seen)]


def _nccl_single_hca(ev: Evidence) -> list[Finding]:
    n = ev.nccl
    if n is None or n.socket or "Socket" in n.networks:
        return []
    hca = f"NCCL_IB_HCA={','.join(n.expected)}" if n.expected else ""
    fix = f"list both RoCE devices of the cabled port: {hca}" if hca else ""
    short: list[str] = []
    for rank, devs in n.devices.items():
        if n.expected:
            if set(n.expected) - set(devs):
                short.append(f"{rank} uses {','.join(devs) or 'no device'}")
        elif len(devs) == 1 and devs[0].startswith("roce"):
            short.append(f"{rank} uses {devs[0]} only")
    if short:
        busbw = f"; busbw {n.busbw_gbytes_s:g} GB/s" if n.busbw_gbytes_s is not None else ""
        seen = "NET/IB line: " + "; ".join(short[:4]) + busbw
        return [Finding(RULES["nccl_single_hca"], n.where, n.nodes, seen, fix)]
    lo, hi = SINGLE_HCA_GBYTES_S
    if not n.devices and n.busbw_gbytes_s is not None and lo <= n.busbw_gbytes_s <= hi:
        seen = f"busbw {n.busbw_gbytes_s:g} GB/s, the one-rail figure; no NET/IB line to confirm"
        return [Finding(RULES["nccl_single_hca"], n.where, n.nodes, seen, fix, certain=False)]
    return []


def _pcie_degraded(ev: Evidence) -> list[Finding]:
    return [
        Finding(RULES["pcie_degraded"], s.where, s.nodes, "the NIC half trained below x4 Gen5")
        for s in ev.narrow_pcie
    ]


def _duplicate_ip(ev: Evidence) -> list[Finding]:
    return [
        Finding(RULES["duplicate_ip"], s.where, s.nodes, "one address answers on two interfaces")
        for s in ev.duplicate_ips
    ]


DIAGNOSERS: tuple[tuple[str, Callable[[Evidence], list[Finding]]], ...] = (
    ("link_down", _link_down),
    ("duplicate_ip", _duplicate_ip),
    ("pcie_degraded", _pcie_degraded),
    ("nic_throttled", _nic_throttled),
    ("half_port", _half_port),
    ("switch_cpu_forwarding", _switch_or_pfc),
    ("nccl_socket", _nccl_socket),
    ("nccl_single_hca", _nccl_single_hca),
)
"""Evidence rules in priority order; each returns the findings of the rules it knows."""


def diagnose(evidence: Evidence) -> list[Finding]:
    """Every cause the evidence shows, most specific first; certain findings before guesses."""
    found = [f for _, rule in DIAGNOSERS for f in rule(evidence)]
    return sorted(found, key=lambda f: not f.certain)
