"""The simulated cluster built from cluster.yaml: boxes, cables, switch, injected faults.

`SimCluster.from_cluster` is the entry point. The result is static (frozen values); time and
load are applied on top of it by `state.Runtime`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from ipaddress import IPv4Address, IPv4Interface
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import hardware
from sparkfabric_sim import nccl_select, noise
from sparkfabric_sim.draft import Draft, NodeDraft
from sparkfabric_sim.hardware import (
    BREAKOUT_DAC,
    LINE_RATE_MBPS,
    NVIDIA_DAC,
    QSFP56_DAC,
    Cable,
    LaneFault,
    Mgmt,
    Netdev,
    PortRef,
    SimNode,
)
from sparkfabric_sim.inject import apply_faults, stock
from sparkfabric_sim.switch_config import SwitchConfig, default_switch

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster, Node

OS_RELEASE = """PRETTY_NAME="Ubuntu 24.04.3 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.3 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
"""


def _mac(seed: int, node_index: int, slot: int) -> str:
    base = noise.hex_id(seed, 24, "mac", node_index)
    tail = (base + slot) & 0xFFFFFF
    return "4c:bb:47:" + ":".join(f"{(tail >> s) & 0xFF:02x}" for s in (16, 8, 0))


def _mgmt(node: Node, index: int, seed: int) -> Mgmt:
    host = node.ssh.host if node.ssh else ""
    try:
        address = IPv4Interface(f"{IPv4Address(host)}/24")
    except ValueError:
        address = IPv4Interface(f"10.0.0.{11 + index}/24")
    return Mgmt(hardware.MGMT_NETDEV, _mac(seed, index, 9), address)


def _sysctls(netdevs: list[str]) -> dict[str, str]:
    out = {
        "net.ipv4.conf.all.arp_ignore": "1",
        "net.ipv4.conf.all.arp_announce": "2",
        "net.ipv4.conf.all.rp_filter": "2",
        "net.ipv4.conf.default.arp_ignore": "0",
        "net.ipv4.conf.default.arp_announce": "0",
        "net.ipv4.conf.default.rp_filter": "2",
        "net.ipv6.conf.all.disable_ipv6": "0",
        "net.ipv6.conf.default.disable_ipv6": "0",
        "net.ipv4.ip_forward": "0",
        # Ubuntu since 20.10 (procps /etc/sysctl.d/10-kernel-hardening.conf): only root (or
        # CAP_SYSLOG) may run dmesg; the kernel log is read through the journal instead.
        "kernel.dmesg_restrict": "1",
    }
    for dev in [*netdevs, hardware.MGMT_NETDEV, "lo"]:
        out[f"net.ipv4.conf.{dev}.arp_ignore"] = "0"
        out[f"net.ipv4.conf.{dev}.arp_announce"] = "0"
        out[f"net.ipv4.conf.{dev}.rp_filter"] = "2"
        fabric = dev not in (hardware.MGMT_NETDEV, "lo")
        out[f"net.ipv6.conf.{dev}.disable_ipv6"] = "1" if fabric else "0"
    return out


def _node_draft(cluster: Cluster, node: Node, index: int, seed: int) -> NodeDraft:
    netdevs: dict[str, Netdev] = {}
    for slot, (rail, port) in enumerate((r, p) for r in (0, 1) for p in hardware.PORTS):
        std = hardware.rail_names(port, rail)
        configured = next((r for r in node.rails if r.port == port and r.index == rail), None)
        name = configured.netdev if configured else std.netdev
        netdevs[name] = Netdev(
            node=node.name,
            name=name,
            port=port,
            rail=rail,
            rdma=configured.rdma if configured else std.rdma,
            pci=std.pci,
            mac=_mac(seed, index, slot),
            ifindex=3 + slot,
            address=configured.address if configured else None,
            mtu=cluster.mtu if configured else 1500,
            ipv6=False,
            cabled=configured is not None,
        )
    user = node.ssh.user if node.ssh and node.ssh.user else "root"
    files = {"/etc/hostname": f"{node.name}\n", "/etc/os-release": OS_RELEASE}
    sim = cluster.spec.simulate
    files[nccl_select.library_path(sim.nccl_version if sim else None)] = "\x7fELF"
    return NodeDraft(
        name=node.name,
        index=index,
        user=user,
        home="/root" if user == "root" else f"/home/{user}",
        mgmt=_mgmt(node, index, seed),
        netdevs=netdevs,
        sysctls=_sysctls(list(netdevs)),
        files=files,
    )


def _cables(cluster: Cluster, seed: int, switch: SwitchConfig | None) -> list[Cable]:
    from pytest_sparkfabric.cluster import plan

    out = []
    for i, c in enumerate(plan.cables(cluster)):
        serial = f"AMP{noise.hex_id(seed, 32, 'cable', i):010d}"[:13]
        b = PortRef(c.b_node, int(str(c.b_port))) if c.b_node else None
        leg = None
        if b is None and switch is not None:
            leg = switch.leg_of(c.a_node).name
        # Spark to Spark: a QSFP112 DAC on two 100G lanes; to a switch: a breakout leg, QSFP56
        # on four 50G lanes (lanes_in_use follows the form); `simulate.cable_type` says else.
        kind = cluster.spec.simulate.cable_type if cluster.spec.simulate else None
        base = NVIDIA_DAC if leg is None else BREAKOUT_DAC
        if kind == "qsfp56" and base.form != "QSFP56":
            base = QSFP56_DAC
        elif kind == "qsfp112":
            base = NVIDIA_DAC
        spec = replace(base, serial=serial)
        # The hardware runs at the speed cluster.yaml declares (a 100G cluster is built of
        # 100G cables or breakouts); only a fault (link_speed) makes it run slower.
        speed = cluster.link_speed_mbps(c.a_node, c.a_port)
        if b is not None:
            speed = min(speed, cluster.link_speed_mbps(b.node, b.port))
        out.append(Cable(PortRef(c.a_node, c.a_port), b, leg, spec, speed))
    return out


class SimCluster:
    """The static model: nodes, cables, the switch, and every fault from `simulate.faults`."""

    def __init__(
        self,
        cluster: Cluster,
        seed: int,
        nodes: dict[str, SimNode],
        cables: tuple[Cable, ...],
        switch: SwitchConfig | None,
        down_cables: frozenset[str],
        lane_faults: tuple[LaneFault, ...],
        pfc_nodes: frozenset[str],
        *,
        rx_bits_phy: bool = False,
        no_lane_counters: frozenset[tuple[str, int]] = frozenset(),
        flap_cables: frozenset[str] = frozenset(),
        nic_offset_c: Mapping[str, float] | None = None,
    ) -> None:
        self.cluster = cluster
        self.seed = seed
        self.nodes = MappingProxyType(nodes)
        self.cables = cables
        self.switch = switch
        self.down_cables = down_cables
        self.lane_faults = lane_faults
        self.pfc_nodes = pfc_nodes
        # Upstream mlx5 does not expose rx_bits_phy (a 2026 patch proposes it), so it is off.
        self.rx_bits_phy = rx_bits_phy
        sim = cluster.spec.simulate
        self.kernel_lanes = sim.kernel_lanes if sim else False
        self.lane_trickle_per_s = sim.lane_trickle_per_s if sim else 3.0
        self.no_lane_counters = no_lane_counters
        self.flap_cables = flap_cables
        self.nic_offset_c = MappingProxyType(dict(nic_offset_c or {}))
        # Lookups the tools make on every command, indexed once (the model does not change).
        self._cable_at: dict[PortRef, Cable] = {}
        for c in cables:
            for end in c.ends():
                self._cable_at.setdefault(end, c)
        self._owners: dict[IPv4Address, list[Netdev]] = {}
        for d in self.netdevs():
            if d.address is not None:
                self._owners.setdefault(d.address.ip, []).append(d)
        self._peers: dict[Netdev, list[Netdev]] = {}

    @classmethod
    def from_cluster(cls, cluster: Cluster, *, rx_bits_phy: bool = False) -> SimCluster:
        seed = cluster.spec.simulate.seed if cluster.spec.simulate else 0
        switch = default_switch(cluster) if cluster.topology == "switch" else None
        nodes = {n.name: _node_draft(cluster, n, i, seed) for i, n in enumerate(cluster.nodes)}
        draft = Draft(cluster, seed, nodes, _cables(cluster, seed, switch), switch)
        if cluster.spec.simulate and cluster.spec.simulate.profile == "stock":
            stock(draft)
        if cluster.spec.simulate:
            for fault in cluster.spec.simulate.faults:
                apply_faults(draft, fault)
        return cls(
            cluster,
            seed,
            {name: d.freeze() for name, d in draft.nodes.items()},
            tuple(draft.cables),
            draft.switch,
            frozenset(draft.down_cables),
            tuple(draft.lane_faults),
            frozenset(draft.pfc_nodes),
            rx_bits_phy=rx_bits_phy,
            no_lane_counters=frozenset(draft.no_lane_counters),
            flap_cables=frozenset(draft.flap_cables),
            nic_offset_c=draft.nic_offset_c,
        )

    # -- lookups ----------------------------------------------------------------------------

    def node(self, name: str) -> SimNode:
        return self.nodes[name]

    def netdevs(self) -> Iterator[Netdev]:
        for n in self.nodes.values():
            yield from n.netdevs

    def cable_of(self, node: str, port: int) -> Cable | None:
        return self._cable_at.get(PortRef(node, port))

    def link_speed_mbps(self, node: str, port: int) -> int:
        cable = self.cable_of(node, port)
        return cable.speed_mbps if cable is not None else LINE_RATE_MBPS

    def owners(self, ip: IPv4Address) -> list[Netdev]:
        return list(self._owners.get(ip, ()))

    def l2_peers(self, dev: Netdev) -> list[Netdev]:
        """Netdevs one cable (or the switch) away on the same rail, whatever the link state."""
        peers = self._peers.get(dev)
        if peers is None:
            peers = self._peers[dev] = self._l2_peers(dev)
        return list(peers)

    def _l2_peers(self, dev: Netdev) -> list[Netdev]:
        cable = self.cable_of(dev.node, dev.port)
        if cable is None:
            return []
        if cable.b is not None:
            far = cable.b if cable.a == PortRef(dev.node, dev.port) else cable.a
            return [self.nodes[far.node].rail(far.port, dev.rail)]
        out = []
        for other in self.cables:
            if other is cable or other.b is not None:
                continue
            out.append(self.nodes[other.a.node].rail(other.a.port, dev.rail))
        return out

    def legs_between(self, a: Netdev, b: Netdev) -> tuple[str, ...]:
        ca, cb = self.cable_of(a.node, a.port), self.cable_of(b.node, b.port)
        if ca is None or cb is None or ca.leg is None or cb.leg is None:
            return ()
        return (ca.leg, cb.leg)

    def host_node(self, host: str) -> str | None:
        """Which node an mpirun/ssh host name or address means."""
        for n in self.nodes.values():
            if host in (n.name, str(n.mgmt.address.ip)):
                return n.name
            ssh = self.cluster.node(n.name).ssh
            if ssh is not None and host == ssh.host:
                return n.name
            if any(d.address is not None and str(d.address.ip) == host for d in n.netdevs):
                return n.name
        return None
