"""The rules: symptom -> cause -> fix, as data (DOMAIN.md §8). Tests name the rule their check
belongs to (`verdict.fail(message, "mtu_path")`); `diagnose()` picks rules from a session's
evidence. `RuleId` is the closed set of names, so a misspelt rule fails mypy; docs/diagnosis.md
shows the table (tests/test_user_docs.py keeps the two in step)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

RuleId = Literal[
    "link_down", "admin_down", "autoneg_failed", "speed_degraded", "fec_not_rs",
    "pcie_degraded", "pcie_aer", "rdma_netdev_mismatch", "mtu_local", "mtu_path",
    "mtu_mismatch", "unreachable_rail", "address_mismatch", "duplicate_ip", "arp_flux",
    "rp_filter_strict", "ipv6_enabled", "gid_missing", "nccl_socket", "nccl_single_hca",
    "nccl_wrong_hca", "nic_throttled", "half_port", "switch_cpu_forwarding", "pfc_stall",
    "marginal_cable", "ber_high", "post_fec_errors", "egress_rate_cap", "nic_overheated",
    "node_suspect", "node_unreachable", "prerequisite_missing", "not_measured",
    "baseline_regression", "pfc_mismatch", "rx_discards", "miscabled", "nccl_gid_index",
    "nccl_socket_ifname", "version_drift", "firewall",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rule:
    id: RuleId
    symptom: str
    cause: str
    fix: str


_TABLE: tuple[Rule, ...] = (
    Rule("link_down", "a cabled port has no carrier / RoCE port not ACTIVE",
         "no link on the cable: unplugged, damaged, or the far end (switch leg) is down",
         "reseat or replace the cable; on a switch check the leg is up (speed forced, see "
         "autoneg)"),
    Rule("admin_down", "a cabled rail netdev is administratively down",
         "the interface was never brought up (no network config for it, or it was set down)",
         "`ip link set dev <netdev> up` now, and give it a network config (netplan) so it stays "
         "up"),
    Rule("autoneg_failed", "cable detected, legs down, auto-negotiation failed",
         "the switch's QSFP56-DD port does not auto-negotiate 2x200G",
         "on the switch: set auto-negotiation=no speed=200G-baseCR4 on lanes 1 and 5 of the port"),
    Rule("speed_degraded", "link up below its declared speed (link_speed, 200G by default)",
         "the link negotiated below its declared speed: a 100G cable or a breakout on the Spark "
         "side (a 200G link needs a whole Spark port), or a switch leg not forced to it",
         "use a cable of the declared speed into a whole Spark port (breakouts belong on the "
         "switch side only); on a switch force the leg's speed (200G-baseCR4); or declare the "
         "speed the cluster was built for (link_speed: 100G)"),
    Rule("fec_not_rs", "active FEC is not RS",
         "the link runs without Reed-Solomon FEC, so pre-FEC errors become lost frames",
         "set FEC to RS (fec91) on both ends; on RouterOS `fec-mode=fec91`"),
    Rule("pcie_degraded", "a PCIe half below 32.0 GT/s x4",
         "the NIC's PCIe link trained narrower or slower (seen at x2 on some GX10 units)",
         "reboot; if it persists, reseat / have the unit serviced: that half caps near 50 Gb/s"),
    Rule("pcie_aer", "uncorrected PCIe AER error of the NIC's PCI function in the kernel log",
         "the NIC's PCIe link lost data it could not correct (a marginal link, overheating, or "
         "firmware); the kernel may have reset the function mid-run",
         "reboot and re-run; if it repeats, update the ConnectX firmware and have the unit "
         "serviced (`journalctl -k | grep AER` shows each report)"),
    Rule("rdma_netdev_mismatch", "RoCE device not bound to the expected netdev",
         "the RoCE device of a rail maps to another interface than the Spark standard names",
         "check the rail's netdev/rdma names in cluster.yaml (long form) or the NIC firmware"),
    Rule("mtu_local", "DF ping refused locally: message too long",
         "the sending interface's MTU is smaller than the cluster MTU",
         "set MTU 9000 on the fabric netdev (netplan/nmcli), on every node"),
    Rule("mtu_path", "DF jumbo ping lost on the way",
         "an MTU smaller than the cluster's further along the path: the peer or the switch port",
         "MTU 9000 end to end: the peer netdev, and on the switch mtu=9000 l2mtu=9216 per port"),
    Rule("mtu_mismatch", "a netdev's MTU differs from the cluster MTU",
         "the interface was configured with another MTU",
         "set the MTU in the node's network config (netplan `mtu: 9000`) and re-apply"),
    Rule("unreachable_rail", "rail peer does not answer",
         "no path on this rail: link down, wrong address or subnet, or a filter dropping it",
         "check the link, the addresses against cluster.yaml, and rp_filter on both ends"),
    Rule("address_mismatch", "a rail netdev carries other IPv4 addresses than cluster.yaml says",
         "the node's network config differs from the plan",
         "give each rail exactly its planned address (netplan) or update cluster.yaml"),
    Rule("duplicate_ip", "one address on two interfaces",
         "duplicate fabric IPs: ARP confusion and loss",
         "give every rail interface its own IP, one subnet per rail"),
    Rule("arp_flux", "two interfaces of a node in one subnet without ARP sysctls",
         "ARP flux: the node answers ARP for one rail on the other",
         "sysctl net.ipv4.conf.all.arp_ignore=1 arp_announce=2 (or one subnet per rail)"),
    Rule("rp_filter_strict", "rp_filter = 1 on a fabric netdev",
         "strict reverse-path filtering drops RoCE that arrives on the other rail",
         "sysctl net.ipv4.conf.all.rp_filter=2 and net.ipv4.conf.<if>.rp_filter=2 (or 0)"),
    Rule("ipv6_enabled", "IPv6 on for a fabric netdev",
         "IPv6 addresses shift the RoCE GID table, so GID indices differ between boots and nodes",
         "sysctl net.ipv6.conf.<if>.disable_ipv6=1 for every fabric netdev (persist it)"),
    Rule("gid_missing", "no RoCE v2 GID carries the rail's IPv4 address",
         "the RoCE device has no usable IPv4 GID: address missing or not yet populated",
         "assign the rail's address; check `show_gids`; RDMA uses the RoCE v2 IPv4 GID"),
    Rule("nccl_socket", "NCCL far below iperf3; logs say Socket",
         "NCCL fell back to TCP: NCCL_NET=Socket or NCCL_IB_DISABLE=1 is set",
         "remove NCCL_NET=Socket / NCCL_IB_DISABLE from nccl.conf and the job environment"),
    Rule("nccl_single_hca", "NCCL ~13.9 GB/s, one device in the NET/IB line",
         "NCCL_IB_HCA names one rail (one PCIe half) of the port",
         "list both RoCE devices of the cabled port, e.g. NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1"),
    Rule("nccl_wrong_hca", "NCCL_IB_HCA selects none of the cabled port's RoCE devices",
         "NCCL_IB_HCA names devices of the other (uncabled) port, or misspells them",
         "list both RoCE devices of the cabled port, e.g. NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1"),
    Rule("nic_throttled", "~13 Gb/s even in loopback, link says 200G",
         "the NIC is throttled or stale after a cable swap or kernel update",
         "reboot both boxes with cables attached; if it persists, unplug power for 60 s"),
    Rule("half_port", "~100-110 Gb/s per port on a clean 200G link",
         "only one of the port's two PCIe halves carries traffic",
         "drive both netdevs / both RoCE devices (NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1)"),
    Rule("switch_cpu_forwarding", "~10 Gb/s on every transport, NCCL < 1 GB/s, switch CPU busy",
         "the switch forwards in software (unused sub-ports in the bridge, or a second bridge)",
         "remove unused breakout sub-ports from the bridge; one bridge; confirm hw-offload (H)"),
    Rule("pfc_stall", "connections come up, RDMA data stalls (~5 Gb/s single flow)",
         "PFC / trust settings disagree between switch and hosts",
         "disable PFC on switch (trust-l3=ignore pfc=disabled) and hosts (mlnx_qos --pfc 0,...)"),
    Rule("marginal_cable", "one lane's error rate ~1000x the others under heat",
         "a marginal cable: it will drop the link under load",
         "replace the cable before it drops the link; re-run the soak with the new one"),
    Rule("ber_high", "pre-FEC BER above the limit",
         "a noisy link: cable, connector or module at the edge of what FEC corrects",
         "reseat, then replace the cable; keep it out of service until a soak passes"),
    Rule("post_fec_errors", "symbol/CRC errors or link-down events grew during the test",
         "errors FEC could not correct: traffic was lost",
         "replace the cable; check module temperatures and airflow"),
    Rule("egress_rate_cap",
         "switch egress-rate(-queue) set; traffic into one node slow, out of it fine",
         "an egress rate limit caps the port toward its node (a queue cap halves a 200G port)",
         "remove egress-rate and egress-rate-queueN on the fabric ports"),
    Rule("nic_overheated",
         "NIC (hwmon) or cable module above its temperature limit during the soak",
         "not enough airflow around the box or the cable cage under load",
         "give the box free airflow (vents clear, no stacking), re-run the soak; a NIC near its "
         "limit makes marginal cables fail first"),
    Rule("node_suspect", "a node fails with two or more partners that pass with others",
         "a fault at that node: its NIC port, its cable or its switch leg, not its partners",
         "run the NIC loopback on it, check its cable and switch leg; swap the cable to tell the "
         "cable from the NIC"),
    Rule("node_unreachable", "a node does not answer ssh; its checks are not measured",
         "the node cannot be logged into: it is down, or its address, user or key is wrong",
         "bring the node up; check that `ssh` with the user and key of cluster.yaml logs in"),
    Rule("prerequisite_missing",
         "a check could not run: a tool, a library or a permission it needs is missing on a node",
         "the node is not set up for this check (a stock DGX OS node lacks perftest, iperf3, "
         "lldpd, gpu-burn, Open MPI and nccl-tests; sudo asks for a password)",
         "install or allow what is missing (the exact command is in each cause; "
         "docs/node-setup.md lists what every marker needs), then run the suite again"),
    Rule("not_measured", "a check could not measure, for a reason that is not the fabric's",
         "the measurement could not be made (the reason says what stopped it)",
         "make the command run there (the reason above says what stopped it), then run the suite "
         "again"),
    Rule("baseline_regression",
         "a bandwidth figure fell more than the tolerance below the baseline run's",
         "bandwidth fell more than the tolerance below the same checks' figures in the baseline "
         "run",
         "find what changed since the baseline run (cables moved or replaced, firmware, "
         "settings: see the comparison in the report), or accept the new figures by making this "
         "run the baseline"),
    Rule("pfc_mismatch", "host PFC (mlnx_qos) differs from the switch leg's or the cable peer's",
         "one side runs PFC on a priority the other side ignores: pause frames go unheeded",
         "make both sides agree: PFC off on both (host `mlnx_qos -i <netdev> --pfc "
         "0,0,0,0,0,0,0,0`, switch `pfc=disabled trust-l3=ignore`), or the same priority on both"),
    Rule("rx_discards", "rx_discards_phy / out_of_sequence grow under load",
         "the NIC drops received RoCE frames (no buffer): retransmits, or a lossless setup losing",
         "on lossy RoCE keep PFC off on both ends and check for a congested or slow receiver; on "
         "lossless, fix the PFC priority/buffer on host and switch so drops stop"),
    Rule("miscabled", "a cable's far end (LLDP) is not the box and port cluster.yaml says",
         "miscabling: a cable sits in another port, or the boxes are cabled in another order than "
         "cluster.yaml lists them",
         "move the cable to the port cluster.yaml names, or correct cluster.yaml (node order, "
         "port numbers) to match the cabling"),
    Rule("nccl_gid_index",
         "NCCL_IB_GID_INDEX pinned to an index that is not a rail's RoCE v2 IPv4 GID",
         "NCCL uses one pinned GID index for every device, and on some rail it is not the RoCE v2 "
         "GID of the rail's IPv4 address (the index differs between rails, 3 vs 5 seen)",
         "remove NCCL_IB_GID_INDEX: NCCL 2.21.5 and later pick each device's RoCE v2 IPv4 GID; "
         "on older NCCL pin the index every rail shares and keep IPv6 off the fabric netdevs"),
    Rule("nccl_socket_ifname", "NCCL_SOCKET_IFNAME / OMPI if_include names no usable interface",
         "the launch environment names a netdev that is missing, down, without an address, "
         "virtual (docker0), or a fabric netdev the other nodes cannot reach",
         "set NCCL_SOCKET_IFNAME (and OMPI_MCA_btl_tcp_if_include) to the management netdev "
         "every node shares (enP7s7 on a Spark), or remove the stale line"),
    Rule("version_drift",
         "one node runs another firmware, driver, kernel or GPU driver than the rest",
         "version drift: one box was updated (or missed an update) on its own",
         "bring every node to the same versions (firmware with mlxfwmanager / the DGX OS update, "
         "then the same kernel, mlx5/DOCA driver and GPU driver) and re-run"),
    Rule("firewall", "the servers listen, pings pass, but clients cannot connect to the test ports",
         "a host firewall on the server's node rejects the test ports (ib_write_bw 18515+, iperf3 "
         "5201+)",
         "allow the fabric subnets on that node (firewalld: firewall-cmd --zone=trusted "
         "--add-source=<subnet>; ufw: ufw allow from <subnet>) or stop the firewall for the run"),
)  # fmt: skip

RULES: Mapping[RuleId, Rule] = MappingProxyType({r.id: r for r in _TABLE})
"""Every rule by id, in the table's order (the order of docs/diagnosis.md)."""
