"""Faults from `simulate.faults`, applied to the model while it is built.

Each fault changes configuration the way the field saw it happen (a sysctl, a line in
/etc/nccl.conf, a switch leg setting, a cable); what that does to traffic is left to the
model's ordinary rules, so every test sees the fault through the real tools' outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from sparkfabric_sim import noise
from sparkfabric_sim.hardware import LaneFault, Netdev, PortRef

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.faults import FaultName
    from pytest_sparkfabric.cluster.spec import FaultSpec
    from sparkfabric_sim.draft import Draft, NodeDraft

DEFAULT_ONSET_C = 78.0


def _targets(d: Draft, f: FaultSpec) -> list[NodeDraft]:
    return [d.nodes[f.node]] if f.node is not None else list(d.nodes.values())


def _port(nd: NodeDraft, f: FaultSpec) -> int:
    ports = nd.cabled_ports()
    return f.port if f.port is not None else (ports[0] if ports else 0)


def _select(nd: NodeDraft, f: FaultSpec) -> list[Netdev]:
    return [
        dev
        for dev in nd.cabled()
        if (f.port is None or dev.port == f.port) and (f.rail is None or dev.rail == f.rail)
    ]


def _set_dev(nd: NodeDraft, dev: Netdev, **changes: object) -> None:
    nd.netdevs[dev.name] = replace(dev, **changes)  # type: ignore[arg-type]


def _append_conf(nd: NodeDraft, line: str) -> None:
    nd.files["/etc/nccl.conf"] = nd.files.get("/etc/nccl.conf", "") + line + "\n"


def _link_down(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    ref = PortRef(nd.name, _port(nd, f))
    for cable in d.cables:
        if ref in cable.ends():
            d.down_cables.add(cable.id)


def _link_flap(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    ref = PortRef(nd.name, _port(nd, f))
    d.flap_cables.update(c.id for c in d.cables if ref in c.ends())


def _autoneg_failed(d: Draft, f: FaultSpec) -> None:
    _switch_leg(d, str(f.switch_port), auto_negotiation=True)


def _switch_leg(d: Draft, name: str, **changes: object) -> None:
    if d.switch is None:
        return
    legs = tuple(
        replace(leg, **changes) if leg.name == name else leg  # type: ignore[arg-type]
        for leg in d.switch.legs
    )
    d.switch = replace(d.switch, legs=legs)


def _switch_fcs_errors(d: Draft, f: FaultSpec) -> None:
    # ~1 frame in 200 000 from the host arrives corrupted at the switch: a few per 10 s round
    # at 200G, while the host's own receive counters (the other direction) stay clean.
    _switch_leg(d, str(f.switch_port), fcs_error_rate=5e-6)


def _cpu_forwarding(d: Draft, f: FaultSpec) -> None:
    if d.switch is None or not d.switch.legs:
        return
    first = d.switch.legs[0].name
    cage = first.rsplit("-", 1)[0]
    used = {leg.name for leg in d.switch.legs}
    spare = next(f"{cage}-{i}" for i in range(1, 9) if f"{cage}-{i}" not in used)
    d.switch = replace(d.switch, extra_bridge_ports=(*d.switch.extra_bridge_ports, spare))


def _pfc_stall(d: Draft, f: FaultSpec) -> None:
    if d.switch is None:
        return
    for nd in _targets(d, f):
        d.pfc_nodes.add(nd.name)
        _switch_leg(d, d.switch.leg_of(nd.name).name, pfc="enabled", trust_l3="keep")


def _duplicate_ip(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    candidates = [x for x in _select(nd, f) if x.port == _port(nd, f)]
    if not candidates:
        return
    dev = candidates[0]
    cable = next((c for c in d.cables if PortRef(nd.name, dev.port) in c.ends()), None)
    donor: Netdev | None = None
    if cable is not None and cable.b is not None:
        far = cable.b if cable.a == PortRef(nd.name, dev.port) else cable.a
        donor = next(
            x for x in d.nodes[far.node].cabled() if x.port == far.port and x.rail == dev.rail
        )
    else:
        others = [o for o in d.nodes.values() if o.name != nd.name]
        donor = next((x for o in others for x in o.cabled() if x.rail == dev.rail), None)
    if donor is not None and donor.address is not None:
        _set_dev(nd, dev, address=donor.address)


def _half_port(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    nd.dead_halves.add((_port(nd, f), f.rail if f.rail is not None else 1))


def _nccl_single_hca(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        rail0 = next(x for x in nd.cabled() if x.port == _port(nd, f) and x.rail == 0)
        _append_conf(nd, f"NCCL_IB_HCA={rail0.rdma}")


def _nccl_socket(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        _append_conf(nd, "NCCL_NET=Socket")


def _ipv6_enabled(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    for dev in _select(nd, f):
        _set_dev(nd, dev, ipv6=True)
        nd.sysctls[f"net.ipv6.conf.{dev.name}.disable_ipv6"] = "0"


def _mtu(d: Draft, f: FaultSpec) -> None:
    value = int(f.value or 1500)
    if f.switch_port is not None and d.switch is not None:
        leg = d.switch.leg(f.switch_port)
        _switch_leg(d, leg.name, mtu=min(leg.mtu, value), l2mtu=value)
    if f.node is not None:
        nd = d.nodes[f.node]
        for dev in _select(nd, f):
            _set_dev(nd, dev, mtu=value)


def _nic_throttled(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    value = noise.rng(d.seed, "throttle", nd.name).gauss(13.0, 1.5)
    nd.throttle_gbps = min(25.0, max(8.0, value))


def _lane_degradation(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    onset = f.onset_c if f.onset_c is not None else DEFAULT_ONSET_C
    d.lane_faults.append(LaneFault(nd.name, _port(nd, f), int(f.lane or 0), onset, f.rate_per_s))


def _arp_flux(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    for key in list(nd.sysctls):
        if key.endswith((".arp_ignore", ".arp_announce")):
            nd.sysctls[key] = "0"


def _rp_filter_strict(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    nd.sysctls["net.ipv4.conf.all.rp_filter"] = "1"
    for dev in _select(nd, f):
        nd.sysctls[f"net.ipv4.conf.{dev.name}.rp_filter"] = "1"


def _pcie_width(d: Draft, f: FaultSpec) -> None:
    # Both functions of one PCIe domain (port 0 and port 1 of that rail) share the x4 link.
    nd = d.nodes[str(f.node)]
    nd.pcie_width[f.rail if f.rail is not None else 1] = 2


def _eeprom_placeholder(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    ref = PortRef(nd.name, _port(nd, f))
    d.cables = [
        replace(c, spec=replace(c.spec, attenuation_db=(0, 0, 0, 0), length_m=0))
        if ref in c.ends()
        else c
        for c in d.cables
    ]


def _node_unreachable(d: Draft, f: FaultSpec) -> None:
    d.nodes[str(f.node)].unreachable = True


def _command_hangs(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        nd.hangs.add(str(f.command))


def _tool_missing(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        nd.missing.add(str(f.command))


def _sudo_refused(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        nd.sudo_asks = True


def _node_lost(d: Draft, f: FaultSpec) -> None:
    d.nodes[str(f.node)].lost_on = str(f.command)


# What a stock DGX OS node lacks (NVIDIA dgx-spark-playbooks: connect-two-sparks installs
# perftest with `sudo apt install perftest`; nccl/README.md installs libopenmpi-dev and builds
# ~/nccl and ~/nccl-tests; gpu-burn is built by hand with `make COMPUTE=121`; iperf3 and lldpd
# are not in the image). It has nvidia-smi, ethtool, iproute2, OpenSSH, and the Mellanox tools
# the playbooks run without installing (ibdev2netdev). Its sudo asks for the user's password.
STOCK_MISSING = frozenset({
    "ib_write_bw", "ib_write_lat", "iperf3", "lldpctl", "gpu_burn", "gpu-burn", "mpirun",
    "all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
})  # fmt: skip


def stock(d: Draft) -> None:
    for nd in d.nodes.values():
        nd.missing |= STOCK_MISSING
        nd.sudo_asks = True
        # A user made for the suite is in no log group: journalctl shows it no kernel line,
        # and dmesg is refused (kernel.dmesg_restrict=1, model._sysctls).
        nd.reads_journal = False


def _phy_counters_missing(d: Draft, f: FaultSpec) -> None:
    # mlx5 exports rx_err_lane_*_phy only with the PCAM per_lane_error_counters capability
    # (en_stats.c): a NIC or firmware without it lists no lane counters at all.
    nd = d.nodes[str(f.node)]
    for port in [f.port] if f.port is not None else nd.cabled_ports():
        d.no_lane_counters.add((nd.name, port))


HOT_NIC_DEFAULT_C = 35


def _hot_nic(d: Draft, f: FaultSpec) -> None:
    # Blocked airflow: the whole thermal profile of the NIC sits higher, idle and loaded.
    nd = d.nodes[str(f.node)]
    d.nic_offset_c[nd.name] = float(f.value if f.value is not None else HOT_NIC_DEFAULT_C)


def _host_pfc(d: Draft, f: FaultSpec) -> None:
    d.nodes[str(f.node)].host_pfc.add(int(f.value) if f.value is not None else 3)


def _rx_discards(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    for dev in _select(nd, f):
        nd.rx_discard_pct[dev.name] = float(f.value) if f.value is not None else 2.0


def _egress_cap(d: Draft, f: FaultSpec) -> None:
    if d.switch is None:
        return
    for nd in _targets(d, f):
        _switch_leg(d, d.switch.leg_of(nd.name).name, egress_rate_mbps=int(f.value or 25000))


def _cable_swapped(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]

    def moved(ref: PortRef | None) -> PortRef | None:
        return PortRef(ref.node, 1 - ref.port) if ref is not None and ref.node == nd.name else ref

    d.cables = [replace(c, a=moved(c.a), b=moved(c.b)) for c in d.cables]  # type: ignore[arg-type]


def _ring_order(d: Draft, f: FaultSpec) -> None:
    names = list(d.nodes)
    one = str(f.node)
    other = names[(names.index(one) + 1) % len(names)]
    swap = {one: other, other: one}

    def moved(ref: PortRef | None) -> PortRef | None:
        return PortRef(swap.get(ref.node, ref.node), ref.port) if ref is not None else ref

    d.cables = [replace(c, a=moved(c.a), b=moved(c.b)) for c in d.cables]  # type: ignore[arg-type]


def _nccl_gid_index(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        _append_conf(nd, f"NCCL_IB_GID_INDEX={f.value if f.value is not None else 5}")


def _link_speed(d: Draft, f: FaultSpec) -> None:
    nd = d.nodes[str(f.node)]
    ref = PortRef(nd.name, _port(nd, f))
    d.cables = [replace(c, speed_mbps=100_000) if ref in c.ends() else c for c in d.cables]


def _nccl_socket_ifname(d: Draft, f: FaultSpec) -> None:
    for nd in _targets(d, f):
        _append_conf(nd, "NCCL_SOCKET_IFNAME=eth0")


# A GB10's ConnectX-7 seen at 28.45.4028 in the field (public GB10 notes, `ethtool -i`;
# tests/probes/ethtool_i_samples/), next to the simulator's default firmware.
OTHER_FIRMWARE = "28.45.4028 (NVD0000000033)"


def _firmware_mismatch(d: Draft, f: FaultSpec) -> None:
    d.nodes[str(f.node)].firmware = OTHER_FIRMWARE


def _firewall(d: Draft, f: FaultSpec) -> None:
    d.nodes[str(f.node)].firewall = True


# One injector for every fault of the registry (cluster/faults.py); tests/cluster/test_faults.py
# holds them in step.
INJECTORS: Mapping[FaultName, Callable[[Draft, FaultSpec], None]] = {
    "link_down": _link_down,
    "autoneg_failed": _autoneg_failed,
    "switch_cpu_forwarding": _cpu_forwarding,
    "pfc_stall": _pfc_stall,
    "duplicate_ip": _duplicate_ip,
    "half_port": _half_port,
    "nccl_single_hca": _nccl_single_hca,
    "nccl_socket": _nccl_socket,
    "ipv6_enabled": _ipv6_enabled,
    "mtu": _mtu,
    "nic_throttled": _nic_throttled,
    "lane_degradation": _lane_degradation,
    "arp_flux": _arp_flux,
    "rp_filter_strict": _rp_filter_strict,
    "pcie_width": _pcie_width,
    "eeprom_placeholder": _eeprom_placeholder,
    "node_unreachable": _node_unreachable,
    "command_hangs": _command_hangs,
    "phy_counters_missing": _phy_counters_missing,
    "hot_nic": _hot_nic,
    "host_pfc": _host_pfc,
    "rx_discards": _rx_discards,
    "switch_fcs_errors": _switch_fcs_errors,
    "egress_cap": _egress_cap,
    "cable_swapped": _cable_swapped,
    "ring_order": _ring_order,
    "nccl_gid_index": _nccl_gid_index,
    "link_speed": _link_speed,
    "nccl_socket_ifname": _nccl_socket_ifname,
    "firmware_mismatch": _firmware_mismatch,
    "firewall": _firewall,
    "tool_missing": _tool_missing,
    "sudo_refused": _sudo_refused,
    "node_lost": _node_lost,
    "link_flap": _link_flap,
}


def apply_faults(d: Draft, f: FaultSpec) -> None:
    INJECTORS[f.fault](d, f)
