"""RoCE frame sizes: what fits through a path and what a smaller L2 MTU on the way drops."""

from __future__ import annotations

# include/rdma/ib_addr.h iboe_get_mtu(): the netdev MTU less 96 bytes of RoCE headers, rounded
# down to an IB MTU; mlx5 caps the active MTU at 4096 (so 1500 -> 1024, 9000 -> 4096).
ROCE_RESERVED = 96
# What one RDMA WRITE packet adds to its payload on the wire, IPv4 RoCE v2: IPv4 20 + UDP 8 +
# BTH 12 + RETH 16 + ICRC 4 (include/rdma/ib_pack.h sizes). A switch leg whose MTU is below
# payload + this drops the frame silently (an L2 switch sends no ICMP), RC retries run out.
ROCE_PACKET_OVERHEAD = 60
IB_MTUS = (256, 512, 1024, 2048, 4096)


def active_mtu(netdev_mtu: int) -> int:
    for ib in (4096, 2048, 1024, 512):
        if netdev_mtu - ROCE_RESERVED >= ib:
            return ib
    return 256


def packet_bytes(ib_mtu: int) -> int:
    return ib_mtu + ROCE_PACKET_OVERHEAD
