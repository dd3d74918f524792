"""RoCE GID tables derived from each netdev's addresses (DOMAIN.md section 2).

Slots 0/1 hold the default GID built from the MAC (RoCE v1, v2). With IPv6 on, NetworkManager's
stable-privacy link-local address is not the MAC-derived one, so it takes slots 2/3 and pushes
the IPv4-mapped GIDs from 2/3 (v2 at index 3) to 4/5 (v2 at index 5).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from ipaddress import IPv6Address
from typing import Literal

from sparkfabric_sim import noise
from sparkfabric_sim.hardware import Netdev

TABLE_SIZE = 255
GidType = Literal["IB/RoCE v1", "RoCE v2"]


@dataclass(frozen=True, slots=True)
class Gid:
    index: int
    address: IPv6Address
    type: GidType
    ndev: str

    @property
    def sysfs(self) -> str:
        return sysfs_gid(self.address)


def sysfs_gid(address: IPv6Address) -> str:
    h = address.packed.hex()
    return ":".join(h[i : i + 4] for i in range(0, 32, 4))


def stable_link_local(seed: int, dev: Netdev) -> IPv6Address:
    """The fe80:: address NetworkManager's stable-privacy mode gives a netdev."""
    iid = noise.hex_id(seed, 64, "stable-privacy", dev.node, dev.name)
    return IPv6Address((0xFE80 << 112) | iid)


@functools.lru_cache(maxsize=4096)  # a static function of the netdev; read on every GID lookup
def table(seed: int, dev: Netdev) -> tuple[Gid, ...]:
    addresses = [dev.link_local]
    if dev.ipv6:
        addresses.append(stable_link_local(seed, dev))
    if dev.address is not None:
        addresses.append(IPv6Address(b"\0" * 10 + b"\xff\xff" + dev.address.ip.packed))
    out: list[Gid] = []
    for address in addresses:
        for kind in ("IB/RoCE v1", "RoCE v2"):
            out.append(Gid(len(out), address, kind, dev.name))
    return tuple(out)


def ipv4_v2_index(seed: int, dev: Netdev) -> int | None:
    if dev.address is None:
        return None
    mapped = IPv6Address(b"\0" * 10 + b"\xff\xff" + dev.address.ip.packed)
    return next(
        (g.index for g in table(seed, dev) if g.address == mapped and g.type == "RoCE v2"), None
    )
