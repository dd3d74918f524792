"""The sysfs files a Spark has and a namespace lacks (pure): RoCE ports and GIDs, PCIe links,
NIC temperatures. `lab.boot` lays them over /sys in each node's own mount namespace, read-only,
so the plugin's `cat` loop reads them exactly as it reads a real box.

The values follow the lab: the IPv4 RoCE v2 GID carries the address the netdev really has
(duplicate_ip included), a cable without carrier reads `1: DOWN`, and fault pcie_width trains a
half at x2. Rail 1's IPv4 GIDs sit at index 4/5 and rail 0's at 2/3, as seen on real boxes
(DOMAIN.md §2): the suite must look the GID up, not assume its index.
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Interface, IPv6Address

from pytest_sparkfabric.cluster import hardware
from sparkfabric_lab.plan import NodeLab

GID_SLOTS = 16
NIC_TEMP_MILLI_C = 45000
_ZERO_GID = ":".join(["0000"] * 8)


def gid_text(address: IPv6Address) -> str:
    """sysfs GID format: eight groups of four hex digits."""
    h = address.packed.hex()
    return ":".join(h[i : i + 4] for i in range(0, 32, 4))


def link_local_gid(mac: str) -> str:
    """The default GID: fe80:: with the modified EUI-64 of the netdev's MAC."""
    b = [int(x, 16) for x in mac.split(":")]
    if len(b) != 6:
        b = [0] * 6
    eui = [b[0] ^ 0x02, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]]
    return gid_text(IPv6Address(bytes([0xFE, 0x80, 0, 0, 0, 0, 0, 0, *eui])))


def ipv4_gid(address: IPv4Interface) -> str:
    return gid_text(IPv6Address(b"\0" * 10 + b"\xff\xff" + address.ip.packed))


def render(node: NodeLab, macs: Mapping[str, str]) -> dict[str, str]:
    """Absolute sysfs path -> content, for every fake file of one node."""
    files: dict[str, str] = {}
    for rail in node.rails:
        ib = f"/sys/class/infiniband/{rail.rdma}"
        port = f"{ib}/ports/1"
        up = node.carrier.get(rail.netdev, True)
        files[f"{port}/state"] = "4: ACTIVE" if up else "1: DOWN"
        files[f"{port}/phys_state"] = "5: LinkUp" if up else "3: Disabled"
        files[f"{port}/link_layer"] = "Ethernet"
        files[f"{ib}/node_type"] = "1: CA"
        slots: dict[int, tuple[str, str]] = {}
        local = link_local_gid(macs.get(rail.netdev, "00:00:00:00:00:00"))
        slots[0] = (local, "IB/RoCE v1")
        slots[1] = (local, "RoCE v2")
        first = 2 if rail.index == 0 else 4
        for k, addr in enumerate(node.addresses.get(rail.netdev, ())):
            slots[first + 2 * k] = (ipv4_gid(addr), "IB/RoCE v1")
            slots[first + 2 * k + 1] = (ipv4_gid(addr), "RoCE v2")
        for i in range(GID_SLOTS):
            if i in slots:
                gid, kind = slots[i]
                files[f"{port}/gids/{i}"] = gid
                files[f"{port}/gid_attrs/types/{i}"] = kind
                files[f"{port}/gid_attrs/ndevs/{i}"] = rail.netdev
            else:
                # An unused slot: the zero GID; its attributes do not read (EINVAL).
                files[f"{port}/gids/{i}"] = _ZERO_GID
        pci = f"/sys/bus/pci/devices/{rail.pci}"
        speed = f"{hardware.PCIE_SPEED_GTS:.1f} GT/s PCIe"
        files[f"{pci}/current_link_speed"] = speed
        files[f"{pci}/current_link_width"] = str(node.pcie_width.get(rail.pci, hardware.PCIE_WIDTH))
        files[f"{pci}/max_link_speed"] = speed
        files[f"{pci}/max_link_width"] = str(hardware.PCIE_WIDTH)
        files[f"{pci}/vendor"] = "0x15b3"
        files[f"{pci}/device"] = "0x1021"
        dev = f"/sys/class/net/{rail.netdev}/device"
        files[f"{dev}/vendor"] = "0x15b3"
        files[f"{dev}/device"] = "0x1021"
        files[f"{dev}/hwmon/hwmon0/name"] = "mlx5"
        files[f"{dev}/hwmon/hwmon0/temp1_label"] = "asic"
        files[f"{dev}/hwmon/hwmon0/temp1_input"] = str(NIC_TEMP_MILLI_C)
    return files


COVERS = ("/sys/class", "/sys/bus/pci/devices")


def cover_for(path: str) -> str:
    """Which covered directory a fake file lies under."""
    for top in COVERS:
        if path.startswith(top + "/"):
            return top
    raise ValueError(f"{path} is not under a covered sysfs directory")
