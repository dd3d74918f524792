"""The simulated hardware as values: fabric netdevs, cables and their EEPROM, nodes.

Everything here is frozen; what changes with time (temperatures, counters, link drops, running
processes) lives in `state.py` and is derived from these values plus the virtual clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv6Address
from typing import Literal

CableForm = Literal["QSFP112", "QSFP56"]

LINE_RATE_MBPS = 200_000
KERNEL_RELEASE = "6.11.0-1016-nvidia"
ARCH = "aarch64"


@dataclass(frozen=True, slots=True)
class CableSpec:
    """What `ethtool -m` reads from a passive copper DAC (SFF-8636 page 00h), and its lanes.

    QSFP112 DACs run 200G on two 100G PAM4 lanes, QSFP56 DACs on four 50G lanes; each lane in
    use logs a trickle of corrected bits (`simulate.lane_trickle_per_s`, DOMAIN.md §6, §9).
    """

    vendor: str
    oui: str
    part: str
    rev: str
    serial: str
    date_code: str
    length_m: int
    attenuation_db: tuple[int, int, int, int]
    form: CableForm
    reports_temperature: bool = True

    @property
    def lanes_in_use(self) -> tuple[int, ...]:
        return (0, 1) if self.form == "QSFP112" else (0, 1, 2, 3)

    @property
    def cmis(self) -> bool:
        """QSFP112 modules carry a CMIS EEPROM, QSFP56 ones SFF-8636 (DOMAIN.md §9)."""
        return self.form == "QSFP112"


@dataclass(frozen=True, slots=True)
class PortRef:
    node: str
    port: int


@dataclass(frozen=True, slots=True)
class Cable:
    """A DAC from a node port to another node port, or to a switch breakout leg."""

    a: PortRef
    b: PortRef | None
    leg: str | None
    spec: CableSpec
    speed_mbps: int = LINE_RATE_MBPS
    """What the link negotiated: 100000 with a 100G cable or a breakout on the Spark side
    (a Spark seen at `Speed: 100000Mb/s`: shared/samples/ethtool/gb10-switch-...-100000-...)."""

    @property
    def id(self) -> str:
        far = f"{self.b.node}:p{self.b.port}" if self.b else f"switch:{self.leg}"
        return f"{self.a.node}:p{self.a.port}<->{far}"

    def ends(self) -> tuple[PortRef, ...]:
        return (self.a, self.b) if self.b else (self.a,)


def eui64_link_local(mac: str) -> IPv6Address:
    octets = [int(x, 16) for x in mac.split(":")]
    octets[0] ^= 0x02
    eui = [*octets[:3], 0xFF, 0xFE, *octets[3:]]
    return IPv6Address(bytes([0xFE, 0x80, 0, 0, 0, 0, 0, 0, *eui]))


@dataclass(frozen=True, slots=True)
class Netdev:
    """One fabric netdev: a PCIe half (`rail`, i.e. PCIe domain) of QSFP `port`."""

    node: str
    name: str
    port: int
    rail: int
    rdma: str
    pci: str
    mac: str
    ifindex: int
    address: IPv4Interface | None
    mtu: int
    ipv6: bool
    cabled: bool

    @property
    def link_local(self) -> IPv6Address:
        """The EUI-64 fe80:: address the kernel derives from the MAC (also GID 0)."""
        return eui64_link_local(self.mac)


@dataclass(frozen=True, slots=True)
class Mgmt:
    """The 10GbE management port (ssh, NCCL bootstrap)."""

    name: str
    mac: str
    address: IPv4Interface


@dataclass(frozen=True)
class SimNode:
    name: str
    index: int
    user: str
    home: str
    mgmt: Mgmt
    netdevs: tuple[Netdev, ...]
    sysctls: Mapping[str, str]
    files: Mapping[str, str]
    throttle_gbps: float | None = None
    pcie_width: Mapping[int, int] = field(default_factory=dict)
    dead_halves: frozenset[tuple[int, int]] = frozenset()
    unreachable: bool = False
    hangs: frozenset[str] = frozenset()
    host_pfc: frozenset[int] = frozenset()
    """Priorities with PFC on, as `mlnx_qos --pfc` leaves them on every fabric netdev."""
    rx_discard_pct: Mapping[str, float] = field(default_factory=dict)
    """Netdev -> share of received RoCE frames its NIC drops for lack of buffer (percent)."""
    firewall: bool = False
    """A host firewall (firewalld's default zone target rejects, with icmp-host-prohibited,
    what no service allows: ssh and ICMP pass, the test ports do not; firewalld.zone(5))."""
    firmware: str | None = None
    """The ConnectX firmware `ethtool -i` shows, where a fault changed it (else the default)."""
    missing: frozenset[str] = frozenset()
    """Commands not installed: the shell answers `not found` (rc 127), `command -v` nothing."""
    sudo_asks: bool = False
    """sudo wants a password: `sudo -n` is refused."""
    reads_journal: bool = True
    """The ssh user may read the kernel log: root, or in `adm` (Ubuntu's first user is), so
    `journalctl -k` shows it; False (stock): an ordinary user in no log group."""
    lost_on: str | None = None
    """The command whose first run makes the node stop answering ssh (fault node_lost)."""

    def netdev(self, name: str) -> Netdev | None:
        return next((d for d in self.netdevs if d.name == name), None)

    def by_rdma(self, rdma: str) -> Netdev | None:
        return next((d for d in self.netdevs if d.rdma == rdma), None)

    def rail(self, port: int, rail: int) -> Netdev:
        return next(d for d in self.netdevs if d.port == port and d.rail == rail)

    @property
    def cabled(self) -> tuple[Netdev, ...]:
        return tuple(d for d in self.netdevs if d.cabled)

    @property
    def cabled_ports(self) -> tuple[int, ...]:
        return tuple(sorted({d.port for d in self.netdevs if d.cabled}))

    def width(self, rail: int) -> int:
        return self.pcie_width.get(rail, 4)


@dataclass(frozen=True, slots=True)
class LaneFault:
    """A marginal cable lane whose error rate explodes with NIC temperature, or (rate_per_s)
    stays at a steady rate that never drops the link."""

    node: str
    port: int
    lane: int
    onset_c: float
    rate_per_s: float | None = None


NVIDIA_DAC = CableSpec(
    vendor="Amphenol",
    oui="78:a7:14",
    part="NJAAKK-N911",
    rev="A",
    serial="",
    date_code="250312",
    length_m=1,
    attenuation_db=(3, 4, 6, 9),
    form="QSFP112",
)


# A 200G QSFP56 DAC node to node (4 x 50G PAM4, SFF-8636 EEPROM): the type of the seed's failing
# cable (DOMAIN.md §6, §9). Vendor and part are placeholders, deliberately not on NVIDIA's list.
QSFP56_DAC = CableSpec(
    vendor="GENERIC",
    oui="00:00:00",
    part="Q56-200G-PC01",
    rev="A",
    serial="",
    date_code="250401",
    length_m=1,
    attenuation_db=(3, 4, 6, 9),
    form="QSFP56",
)


# The Spark end of a switch breakout: one 400G QSFP56-DD switch cage to 2 x 200G QSFP56, eight
# 50G PAM4 lanes, four per leg (a vendor's spec sheet, philisun.com "400G QSFP-DD to 2x200G
# QSFP56 Passive DAC"; DOMAIN.md section 7). Vendor and part here are placeholders for a
# third-party breakout, deliberately not on NVIDIA's Spark cable list.
BREAKOUT_DAC = CableSpec(
    vendor="PHILISUN",
    oui="00:00:00",
    part="QDD-2Q56-PC01",
    rev="A",
    serial="",
    date_code="250601",
    length_m=1,
    attenuation_db=(0, 0, 0, 0),
    form="QSFP56",
)
