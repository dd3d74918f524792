"""mlx5 `ethtool -S` counters of one netdev at a virtual time (DOMAIN.md section 6).

Physical (`*_phy`) counters belong to the QSFP port, so both halves of a port read the same
values. Names and their order follow a real mlx5 `ethtool -S` listing (see the report's
provenance notes); `rx_bits_phy` is only printed when the model says the kernel has it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparkfabric_sim import noise
from sparkfabric_sim.hardware import Netdev

if TYPE_CHECKING:
    from sparkfabric_sim.state import Runtime

IDLE_BYTES_PER_S = 180.0
PAUSE_PER_S = 850.0
AVG_FRAME_BYTES = 4150.0
TRICKLE_SPREAD = (0.5, 1.5)
"""Each lane's share of `simulate.lane_trickle_per_s` (seeded): PAM4 lanes of one healthy
cable trickle at similar, not equal, rates (DOMAIN.md §9)."""


def link_uptime(rt: Runtime, node: str, port: int, t: float) -> float:
    """Seconds the port had link since boot (t=0)."""
    if not rt.port_up(node, port, 0.0):
        return 0.0
    return t - rt.down_seconds(node, port, t)


def lane_errors(rt: Runtime, node: str, port: int, t: float) -> tuple[list[int], int]:
    """Corrected bits per lane 0..3 and uncorrectable symbol errors, received on this port."""
    lanes = [0.0] * 4
    symbol = 0.0
    cable = rt.model.cable_of(node, port)
    if cable is None:
        return [0] * 4, 0
    up = link_uptime(rt, node, port, t)
    for lane in cable.spec.lanes_in_use:
        share = noise.uniform(rt.model.seed, *TRICKLE_SPREAD, "trickle", node, port, lane)
        lanes[lane] += rt.model.lane_trickle_per_s * share * up
    for fault in rt.model.lane_faults:
        if fault.node == node and fault.port == port and fault.rate_per_s is not None:
            lanes[fault.lane] += fault.rate_per_s * up
        elif fault.node == node and fault.port == port:
            history = rt.lane_history(fault, t)
            lanes[fault.lane] += history.corrected
            symbol += history.uncorrectable
    return [int(x) for x in lanes], int(symbol)


def rdma_rx_frames(rt: Runtime, dev: Netdev, t: float) -> int:
    """RoCE frames received on this netdev by time `t`: each RDMA flow into it delivers at its
    rate from its start to its end, so a reading in the middle of a flow sees part of it."""
    moved = 0.0
    for f in rt.rdma_into.get((dev.node, dev.name), ()):
        moved += f.rate_gbps * 1e9 / 8 * min(max(t - f.start, 0.0), f.end - f.start)
    packets = noise.uniform(rt.model.seed, 0.9, 1.1, "pkt", dev.node, dev.name)
    return int(moved / AVG_FRAME_BYTES * packets)


def rx_discards(rt: Runtime, dev: Netdev, t: float) -> int:
    """Received frames the NIC dropped for lack of receive buffer (fault rx_discards): mlx5
    counts them in `rx_discards_phy` and the priority's `rx_prioN_discards` (mlx5 counters.rst),
    and the responder sees each gap as an out-of-sequence packet (hw_counters out_of_sequence)."""
    pct = rt.model.node(dev.node).rx_discard_pct.get(dev.name, 0.0)
    return int(rdma_rx_frames(rt, dev, t) * pct / 100.0) if pct else 0


HW_COUNTERS = (
    "duplicate_request",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "rnr_nak_retry_err",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "rx_atomic_requests",
    "rx_read_requests",
    "rx_write_requests",
)


def hw_counters_names() -> tuple[str, ...]:
    return HW_COUNTERS


def hw_counters(rt: Runtime, dev: Netdev, t: float) -> dict[str, int]:
    """`/sys/class/infiniband/<dev>/ports/1/hw_counters/*`: the names mlx5 exposes with the
    out-of-sequence, retransmission and congestion capabilities (drivers/infiniband/hw/mlx5/
    counters.c; the same names a public 4x GX10 report reads, research/FACTS.md §7)."""
    return {name: hw_counter(rt, dev, name, t) for name in HW_COUNTERS}


def hw_counter(rt: Runtime, dev: Netdev, name: str, t: float) -> int:
    """One of `hw_counters`, without counting the others."""
    if name == "out_of_sequence":
        return rx_discards(rt, dev, t)
    return rdma_rx_frames(rt, dev, t) if name == "rx_write_requests" else 0


def ethtool_stats(rt: Runtime, dev: Netdev, t: float) -> list[tuple[str, int]]:
    model = rt.model
    up = link_uptime(rt, dev.node, dev.port, t) if dev.cabled else 0.0
    traffic = rt.traffic.get((dev.node, dev.name))
    tx = int((traffic.tx_bytes if traffic else 0.0) + IDLE_BYTES_PER_S * up)
    rx = int((traffic.rx_bytes if traffic else 0.0) + IDLE_BYTES_PER_S * up)
    sw_rx, sw_tx = int(IDLE_BYTES_PER_S * up), int(IDLE_BYTES_PER_S * up)
    lanes, symbol = lane_errors(rt, dev.node, dev.port, t) if dev.cabled else ([0] * 4, 0)
    pause = int(PAUSE_PER_S * up) if dev.node in model.pfc_nodes else 0
    packets = noise.uniform(model.seed, 0.9, 1.1, "pkt", dev.node, dev.name)
    drops = rx_discards(rt, dev, t)
    node = model.node(dev.node)

    def pk(n: int) -> int:
        return int(n / AVG_FRAME_BYTES * packets)

    out: list[tuple[str, int]] = [
        ("rx_packets", pk(sw_rx)),
        ("rx_bytes", sw_rx),
        ("tx_packets", pk(sw_tx)),
        ("tx_bytes", sw_tx),
        ("tx_tso_packets", 0),
        ("tx_tso_bytes", 0),
        ("rx_lro_packets", 0),
        ("rx_lro_bytes", 0),
        ("rx_ecn_mark", 0),
        ("rx_csum_unnecessary", 0),
        ("rx_csum_none", pk(sw_rx)),
        ("rx_csum_complete", 0),
        ("tx_csum_partial", 0),
        ("tx_queue_stopped", 0),
        ("tx_queue_dropped", 0),
        ("tx_xmit_more", 0),
        ("tx_recover", 0),
        ("tx_queue_wake", 0),
        ("tx_cqe_err", 0),
        ("rx_wqe_err", 0),
        ("rx_buff_alloc_err", 0),
        ("rx_out_of_buffer", 0),
        ("rx_if_down_packets", 0),
        ("rx_steer_missed_packets", 0),
        ("rx_vport_unicast_packets", pk(sw_rx)),
        ("rx_vport_unicast_bytes", sw_rx),
        ("tx_vport_unicast_packets", pk(sw_tx)),
        ("tx_vport_unicast_bytes", sw_tx),
        ("rx_vport_rdma_unicast_packets", pk(rx - sw_rx)),
        ("rx_vport_rdma_unicast_bytes", rx - sw_rx),
        ("tx_vport_rdma_unicast_packets", pk(tx - sw_tx)),
        ("tx_vport_rdma_unicast_bytes", tx - sw_tx),
        ("tx_packets_phy", pk(tx)),
        ("rx_packets_phy", pk(rx)),
        ("rx_crc_errors_phy", symbol // 2),
        ("tx_bytes_phy", tx),
        ("rx_bytes_phy", rx),
        ("tx_multicast_phy", 0),
        ("tx_broadcast_phy", 0),
        ("rx_multicast_phy", 0),
        ("rx_broadcast_phy", 0),
        ("rx_in_range_len_errors_phy", 0),
        ("rx_out_of_range_len_phy", 0),
        ("rx_oversize_pkts_phy", 0),
        ("rx_symbol_err_phy", symbol),
        ("tx_mac_control_phy", 0),
        ("rx_mac_control_phy", pause),
        ("rx_unsupported_op_phy", 0),
        ("rx_pause_ctrl_phy", pause),
        ("tx_pause_ctrl_phy", 0),
        ("rx_discards_phy", drops),
        ("tx_discards_phy", 0),
        ("tx_errors_phy", 0),
        ("rx_undersize_pkts_phy", 0),
        ("rx_fragments_phy", 0),
        ("rx_jabbers_phy", 0),
        ("rx_64_bytes_phy", pk(sw_rx) // 3),
        ("rx_65_to_127_bytes_phy", pk(sw_rx) // 3),
        ("rx_128_to_255_bytes_phy", pk(sw_rx) // 3),
        ("rx_256_to_511_bytes_phy", 0),
        ("rx_512_to_1023_bytes_phy", 0),
        ("rx_1024_to_1518_bytes_phy", 0),
        ("rx_1519_to_2047_bytes_phy", 0),
        ("rx_2048_to_4095_bytes_phy", 0),
        ("rx_4096_to_8191_bytes_phy", pk(rx - sw_rx)),
        ("rx_8192_to_10239_bytes_phy", 0),
        ("link_down_events_phy", rt.link_down_events(dev.node, dev.port, t) if dev.cabled else 0),
    ]
    if model.rx_bits_phy:
        out.append(("rx_bits_phy", int(model.link_speed_mbps(dev.node, dev.port) * 1e6 * up)))
    out += [
        ("rx_pcs_symbol_err_phy", symbol),
        ("rx_corrected_bits_phy", sum(lanes)),
        *(
            (f"rx_err_lane_{i}_phy", lanes[i])
            for i in range(4)
            if (dev.node, dev.port) not in model.no_lane_counters
        ),
        ("rx_buffer_passed_thres_phy", 0),
        ("rx_pci_signal_integrity", 0),
        ("tx_pci_signal_integrity", 0),
        ("outbound_pci_stalled_rd", 0),
        ("outbound_pci_stalled_wr", 0),
        ("outbound_pci_stalled_rd_events", 0),
        ("outbound_pci_stalled_wr_events", 0),
        ("rx_prio0_bytes", rx),
        ("rx_prio0_packets", pk(rx)),
        ("rx_prio0_discards", drops),
        ("tx_prio0_bytes", tx),
        ("tx_prio0_packets", pk(tx)),
        # Per-priority pause counters exist only for priorities with PFC on (mlx5 en_stats.c);
        # priority 3 under a switch PFC stall is added below with its pause count.
        *(
            (name, 0)
            for p in sorted(node.host_pfc)
            if not (p == 3 and dev.node in model.pfc_nodes)
            for name in (f"rx_prio{p}_pause", f"tx_prio{p}_pause")
        ),
        ("tx_pause_storm_warning_events", 0),
        ("tx_pause_storm_error_events", 0),
        ("module_unplug", 0),
        ("module_bus_stuck", 0),
        ("module_high_temp", 0),
        ("module_bad_shorted", 0),
    ]
    if dev.node in model.pfc_nodes:
        # mlx5 exports rx/tx_prioN_pause only for priorities with PFC on (counters.rst).
        at = next(i for i, (name, _) in enumerate(out) if name == "tx_pause_storm_warning_events")
        out[at:at] = [("rx_prio3_pause", pause), ("tx_prio3_pause", 0)]
    return out
