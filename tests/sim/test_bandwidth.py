"""Bandwidth and NCCL figures follow DOMAIN.md section 5, and the noise is seeded."""

from __future__ import annotations

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import EXAMPLES, example, with_faults
from tests.sim.helpers import R0, R1, nccl, rdma, tcp


def test_a_loopback_runs_near_106() -> None:
    # One rail at 1 and 4 QPs: test_fidelity.test_bandwidth_reports_round_trip.
    t = SimTransport(example("direct-2"))
    loop = rdma(t, [("spark-1", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11")])
    assert 104 <= loop[0] <= 108


def test_both_halves_together_are_capped_near_190() -> None:
    t = SimTransport(example("direct-2"))
    rates = rdma(t, [R0, R1], q=4)
    assert 185 <= sum(rates) <= 198 and all(r >= 90 for r in rates)
    streams = tcp(
        t,
        [
            ("spark-1", "192.168.100.11", "spark-2", "192.168.100.12"),
            ("spark-1", "192.168.101.11", "spark-2", "192.168.101.12"),
        ],
    )
    # TCP meets the same port limit as RDMA and gets 97.5-99.5 % of it: below RDMA, never tied.
    assert 180 <= sum(streams) < sum(rates)


def test_both_directions_at_once_share_the_full_duplex_budget() -> None:
    both_ways = [R0, R1]
    back = [
        ("spark-2", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11"),
        ("spark-2", "roceP2p1s0f1", "spark-1", "roceP2p1s0f1", "192.168.101.11"),
    ]
    rates = rdma(SimTransport(example("direct-2")), both_ways + back, q=4)
    # ~170 each way (the published full-duplex run), against 185-198 one-way.
    assert 168 <= rates[0] + rates[1] <= 172 and 168 <= rates[2] + rates[3] <= 172
    text = (EXAMPLES / "direct-2.yaml").read_text()
    assert "simulate:\n" in text
    slow = parse_cluster(text.replace("simulate:\n", "simulate:\n  full_duplex_gbps: 150\n"))
    slower = rdma(SimTransport(slow), both_ways + back, q=4)
    assert 148 <= slower[0] + slower[1] <= 152


def test_a_ring_node_shares_each_pcie_domain_between_its_neighbours() -> None:
    t = SimTransport(example("ring-4"))
    # spark-1 sends on rail 0 of port 0 (to spark-2) and rail 0 of port 1 (to spark-4): one x4 link.
    rates = rdma(
        t,
        [
            ("spark-1", "rocep1s0f0", "spark-2", "rocep1s0f1", "192.168.100.12"),
            ("spark-1", "rocep1s0f1", "spark-4", "rocep1s0f0", "192.168.106.14"),
        ],
        q=4,
    )
    assert all(50 <= r <= 58 for r in rates)


def test_a_background_stream_takes_its_share_until_stopped() -> None:
    t = SimTransport(example("direct-2"))
    t.start(Job("spark-2", "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 4 -D 600 -p 9000", 700))
    stream = t.start(
        Job(
            "spark-1",
            "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 4 -D 600 -p 9000 192.168.100.12",
            700,
        )
    )
    assert rdma(t, [R0], q=4)[0] < 60
    stream.stop()
    assert rdma(t, [R0], q=4)[0] > 100


def test_nccl_bus_bandwidth_by_topology() -> None:
    direct = nccl(SimTransport(example("direct-2")), ["192.168.100.11", "192.168.100.12"])
    assert direct.avg_busbw_gbytes_s is not None and 22.0 <= direct.avg_busbw_gbytes_s <= 23.8
    ips = [f"192.168.100.{11 + i}" for i in range(4)]
    switched = nccl(SimTransport(example("demo")), ips)
    assert switched.avg_busbw_gbytes_s is not None and 23.0 <= switched.avg_busbw_gbytes_s <= 24
    ring = nccl(
        SimTransport(example("ring-4")),
        ["192.168.100.11", "192.168.102.12", "192.168.104.13", "192.168.106.14"],
    )
    assert ring.avg_busbw_gbytes_s is not None and 10 <= ring.avg_busbw_gbytes_s < 15


def test_results_depend_on_the_seed_and_not_on_call_order() -> None:
    first = SimTransport(example("direct-2"))
    a0, a1 = rdma(first, [R0])[0], rdma(first, [R1])[0]
    second = SimTransport(example("direct-2"))
    b1, b0 = rdma(second, [R1])[0], rdma(second, [R0])[0]
    assert (a0, a1) == (b0, b1)
    other = SimTransport(with_faults("direct-2", seed=8))
    assert rdma(other, [R0])[0] != a0


def _lat(cluster_name: str, client: str, server: str, ip: str) -> tuple[int, str]:
    from pytest_sparkfabric.probes.perftest import parse_ib_write_lat

    t = SimTransport(example(cluster_name))
    srv = t.start(Job(server, "ib_write_lat -d rocep1s0f1 -F -p 18600", 60))
    r = t.run(Job(client, f"ib_write_lat -d rocep1s0f1 -F -p 18600 {ip}", 60))
    srv.stop()
    return (round(parse_ib_write_lat(r.stdout).t_avg_us * 100) if r.rc == 0 else -1), r.stderr


def test_rdma_latency_one_cable_a_switch_hop_and_software_forwarding() -> None:
    direct, _ = _lat("direct-2", "spark-1", "spark-2", "192.168.100.12")
    assert 142 <= direct <= 152  # ~1.47 us, the published GB10 figure
    switched, _ = _lat("demo", "spark-1", "spark-2", "192.168.100.12")
    assert direct < switched <= 260
    slow, _ = _lat("faults/switch_cpu_forwarding", "spark-1", "spark-2", "192.168.100.12")
    assert slow > 1500  # tens of microseconds through the switch CPU
    refused, err = _lat("faults/firewall", "spark-1", "spark-2", "192.168.100.12")
    assert refused == -1 and "Couldn't connect" in err
