"""The fault registry: every fault `simulate.faults` can inject, the one list of them. A new
fault is a row here, an injector in `sparkfabric_sim.inject`, a plan in `sparkfabric_lab.faultplan`
(or `lab="simulated"`) and its example in examples/faults/<name>.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

# fmt: off
FaultName = Literal[
    "link_down", "autoneg_failed", "switch_cpu_forwarding", "pfc_stall", "duplicate_ip",
    "half_port", "nccl_single_hca", "nccl_socket", "ipv6_enabled", "mtu", "nic_throttled",
    "lane_degradation", "arp_flux", "rp_filter_strict", "pcie_width", "eeprom_placeholder",
    "node_unreachable", "command_hangs", "phy_counters_missing", "hot_nic", "host_pfc",
    "rx_discards", "switch_fcs_errors", "egress_cap", "cable_swapped", "ring_order",
    "nccl_gid_index", "link_speed", "nccl_socket_ifname", "firmware_mismatch", "firewall",
    "tool_missing", "sudo_refused", "node_lost", "link_flap",
]
# fmt: on
Target = Literal[
    "node", "rail", "port", "lane", "switch_port", "value", "onset_c", "command", "rate_per_s"
]
# real: the lab makes it happen in the kernel, in a file or in what runs; simulated: only the
# simulator's hardware tools (ethtool, the switch's answers, ...) show it, in the lab too.
InLab = Literal["real", "simulated"]

TARGETS: tuple[Target, ...] = get_args(Target)


@dataclass(frozen=True, slots=True)
class Fault:
    name: FaultName
    required: tuple[Target, ...]
    allowed: tuple[Target, ...]
    what: str
    lab: InLab
    needs_switch: bool = False

    def usage(self) -> str:
        """How the fault is written, with its targets: the fix of a wrong one."""
        req = ", ".join(f"{k}: ..." for k in self.required)
        opt = f" (optional: {', '.join(self.allowed)})" if self.allowed else ""
        return f"write {{fault: {self.name}{', ' + req if req else ''}}}{opt}"


# fmt: off
_TABLE: tuple[Fault, ...] = (
    Fault("link_down", ("node",), ("port",),
          "the cable on a node port has no link", "real"),
    Fault("autoneg_failed", ("switch_port",), (),
          "a breakout leg left on auto-negotiation stays down", "simulated", needs_switch=True),
    Fault("switch_cpu_forwarding", (), (),
          "an unused breakout sub-port in the bridge: the switch CPU forwards", "simulated",
          needs_switch=True),
    Fault("pfc_stall", (), ("node",),
          "PFC/trust settings stall RoCE data", "simulated", needs_switch=True),
    Fault("duplicate_ip", ("node", "rail"), ("port",),
          "a rail carries the address of another node's rail", "real"),
    Fault("half_port", ("node",), ("port", "rail"),
          "one PCIe half carries no traffic", "simulated"),
    Fault("nccl_single_hca", (), ("node",),
          "NCCL_IB_HCA names one RoCE device", "real"),
    Fault("nccl_socket", (), ("node",),
          "/etc/nccl.conf forces NCCL_NET=Socket", "real"),
    Fault("ipv6_enabled", ("node",), ("rail", "port"),
          "IPv6 is on for a fabric netdev", "real"),
    Fault("mtu", ("value",), ("node", "rail", "port", "switch_port"),
          "an MTU below the cluster's on a node netdev or a switch port", "real"),
    Fault("nic_throttled", ("node",), (),
          "the NIC runs at ~13 Gb/s, link says 200G", "simulated"),
    Fault("lane_degradation", ("node", "lane"), ("port", "onset_c", "rate_per_s"),
          "one lane's error rate grows with NIC temperature under GPU load (or, with "
          "rate_per_s, stays at that steady rate)", "simulated"),
    Fault("arp_flux", ("node",), (),
          "arp_ignore/arp_announce left at 0", "real"),
    Fault("rp_filter_strict", ("node",), ("rail", "port"),
          "rp_filter=1 (strict)", "real"),
    Fault("pcie_width", ("node",), ("rail", "port"),
          "a PCIe half trained at x2", "real"),
    Fault("eeprom_placeholder", ("node",), ("port",),
          "cable EEPROM reads 0 dB, 0 m", "simulated"),
    Fault("node_unreachable", ("node",), (),
          "the node does not answer ssh", "real"),
    Fault("command_hangs", ("command",), ("node",),
          "a tool never returns", "real"),
    Fault("phy_counters_missing", ("node",), ("port",),
          "the NIC exports no per-lane rx_err_lane_*_phy counters", "simulated"),
    Fault("hot_nic", ("node",), ("value",),
          "the NIC runs `value` C (default 35) hotter than normal: above its limit under load",
          "simulated"),
    Fault("host_pfc", ("node",), ("value",),
          "PFC on one priority (value, default 3) on a node's fabric netdevs", "simulated"),
    Fault("rx_discards", ("node",), ("port", "rail", "value"),
          "the NIC drops received RoCE frames under load (value: percent, default 2)",
          "simulated"),
    Fault("switch_fcs_errors", ("switch_port",), (),
          "frames from the host arrive corrupted at a switch leg (FCS errors grow with traffic)",
          "simulated", needs_switch=True),
    Fault("egress_cap", ("node",), ("value",),
          "the switch leg toward a node shapes egress to `value` Mb/s (default 25000)",
          "simulated", needs_switch=True),
    Fault("cable_swapped", ("node",), (),
          "a node's two cables exchanged (one cable: it sits in the other port)", "simulated"),
    Fault("ring_order", ("node",), (),
          "the node and the next one in cluster.yaml exchanged in the cabling", "simulated"),
    Fault("nccl_gid_index", (), ("node", "value"),
          "/etc/nccl.conf pins NCCL_IB_GID_INDEX (default 5), not the rails' RoCE v2 IPv4 GID",
          "real"),
    Fault("link_speed", ("node",), ("port",),
          "the cable on a node port negotiates 100G (a 100G cable or a Spark-side breakout)",
          "simulated"),
    Fault("nccl_socket_ifname", (), ("node",),
          "/etc/nccl.conf sets NCCL_SOCKET_IFNAME=eth0, a netdev a Spark does not have", "real"),
    Fault("firmware_mismatch", ("node",), (),
          "the node's ConnectX-7 runs other firmware than the rest", "simulated"),
    Fault("firewall", ("node",), (),
          "a host firewall rejects the test ports (ssh and ping pass)", "simulated"),
    Fault("tool_missing", ("command",), ("node",),
          "a command is not installed (the shell answers `not found`, rc 127)", "real"),
    Fault("sudo_refused", (), ("node",),
          "sudo asks for a password (`sudo -n` is refused)", "simulated"),
    Fault("node_lost", ("node", "command"), (),
          "the node stops answering ssh from the first time it runs `command`", "real"),
    Fault("link_flap", ("node",), ("port",),
          "the cable drops its link once for a moment, one second into the first RDMA "
          "transfer over it, and comes back", "simulated"),
)
# fmt: on

FAULTS: Mapping[FaultName, Fault] = {f.name: f for f in _TABLE}
