"""Facts of the box: the fixed names a DGX Spark / GX10 gives its fabric netdevs (DOMAIN.md §1)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RailNames:
    netdev: str
    rdma: str
    pci: str


_NAMES = {
    (0, 0): RailNames("enp1s0f0np0", "rocep1s0f0", "0000:01:00.0"),
    (0, 1): RailNames("enP2p1s0f0np0", "roceP2p1s0f0", "0002:01:00.0"),
    (1, 0): RailNames("enp1s0f1np1", "rocep1s0f1", "0000:01:00.1"),
    (1, 1): RailNames("enP2p1s0f1np1", "roceP2p1s0f1", "0002:01:00.1"),
}

PORTS = (0, 1)
RAILS_PER_PORT = 2
MGMT_NETDEV = "enP7s7"
PCIE_SPEED_GTS = 32.0
# Each QSFP port runs 200G (DOMAIN.md §1): ethtool says 200000Mb/s.
LINK_SPEED_MBPS = 200_000
PCIE_WIDTH = 4
# A switch leg forced to a link speed, as RouterOS names it: "the last digit represents the
# number of lines" (MikroTik Ethernet manual, forced link mode). A leg of a 2x200G breakout runs
# four 50G lanes, a leg of a 4x100G breakout two.
LEG_LINK_MODES = {200_000: "200G-baseCR4", 100_000: "100G-baseCR2"}


def rail_names(port: int, index: int) -> RailNames:
    """Standard netdev / RoCE device / PCI address of rail `index` of QSFP `port`."""
    return _NAMES[(port, index)]


def l2mtu_need(mtu: int) -> int:
    """The smallest RouterOS l2mtu that carries `mtu` on an untagged leg: L2MTU excludes the
    14-byte Ethernet header and the FCS (it would count a 4-byte VLAN tag; MikroTik manual "MTU
    in RouterOS", DOMAIN.md §7), so mtu 9000 needs l2mtu >= 9000, not 9014."""
    return mtu


ROCE_HEADERS_B = 96
IB_MTUS_B = (4096, 2048, 1024, 512, 256)


def roce_active_mtu(netdev_mtu: int) -> int:
    """The RoCE active MTU a port reports for its netdev's MTU: the largest IB MTU that fits the
    MTU less 96 bytes of RoCE headers (kernel include/rdma/ib_addr.h iboe_get_mtu()), at most
    4096: 9000 -> 4096, 1500 -> 1024 (DOMAIN.md §9)."""
    return next((ib for ib in IB_MTUS_B if netdev_mtu - ROCE_HEADERS_B >= ib), IB_MTUS_B[-1])
