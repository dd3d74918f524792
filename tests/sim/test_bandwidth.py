"""Bandwidth and NCCL figures follow DOMAIN.md section 5, and the noise is seeded."""

from __future__ import annotations

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.probes.perftest import parse_ib_write_lat
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import EXAMPLES, IPS4, LOOP1, R0, R1, nccl, rdma, served, sim, tcp

BACK = [
    ("spark-2", "rocep1s0f1", "spark-1", "rocep1s0f1", "192.168.100.11"),
    ("spark-2", "roceP2p1s0f1", "spark-1", "roceP2p1s0f1", "192.168.101.11"),
]


def test_a_loopback_runs_near_106() -> None:
    # One rail at 1 and 4 QPs: test_fidelity.test_bandwidth_reports_round_trip.
    assert 104 <= rdma(sim(), [LOOP1])[0] <= 108


def test_both_halves_together_are_capped_near_190() -> None:
    t = sim()
    rates = rdma(t, [R0, R1], q=4)
    assert 185 <= sum(rates) <= 198 and all(r >= 90 for r in rates)
    pairs = [("spark-1", f"192.168.10{r}.11", "spark-2", f"192.168.10{r}.12") for r in (0, 1)]
    # TCP meets the same port limit as RDMA and gets 97.5-99.5 % of it: below RDMA, never tied.
    assert 180 <= sum(tcp(t, pairs)) < sum(rates)


def test_both_directions_at_once_share_the_full_duplex_budget() -> None:
    rates = rdma(sim(), [R0, R1, *BACK], q=4)
    # ~170 each way (the published full-duplex run), against 185-198 one-way.
    assert 168 <= rates[0] + rates[1] <= 172 and 168 <= rates[2] + rates[3] <= 172
    text = (EXAMPLES / "direct-2.yaml").read_text()
    assert "simulate:\n" in text
    slow = parse_cluster(text.replace("simulate:\n", "simulate:\n  full_duplex_gbps: 150\n"))
    slower = rdma(SimTransport(slow), [R0, R1, *BACK], q=4)
    assert 148 <= slower[0] + slower[1] <= 152


def test_a_ring_node_shares_each_pcie_domain_between_its_neighbours() -> None:
    # spark-1 sends on rail 0 of port 0 (to spark-2) and rail 0 of port 1 (to spark-4): one x4 link.
    pairs = [
        ("spark-1", "rocep1s0f0", "spark-2", "rocep1s0f1", "192.168.100.12"),
        ("spark-1", "rocep1s0f1", "spark-4", "rocep1s0f0", "192.168.106.14"),
    ]
    assert all(50 <= r <= 58 for r in rdma(sim("ring-4"), pairs, q=4))


def test_a_background_stream_takes_its_share_until_stopped() -> None:
    t = sim()
    stream = "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 4 -D 600 -p 9000"
    t.start(Job("spark-2", stream, 700))
    bg = t.start(Job("spark-1", f"{stream} 192.168.100.12", 700))
    assert 0 < rdma(t, [R0], q=4)[0] < 60
    bg.stop()
    assert rdma(t, [R0], q=4)[0] > 100


def test_nccl_bus_bandwidth_by_topology() -> None:
    ring = ["192.168.100.11", "192.168.102.12", "192.168.104.13", "192.168.106.14"]
    for name, ips, low, high in [
        ("direct-2", IPS4[:2], 22.0, 23.8),
        ("demo", IPS4, 23.0, 24.0),
        ("ring-4", ring, 10.0, 14.99),
    ]:
        busbw = nccl(sim(name), ips).avg_busbw_gbytes_s
        assert busbw is not None and low <= busbw <= high, name


def test_results_spread_with_the_seed_and_do_not_depend_on_call_order() -> None:
    # Thresholds meet a spread, never one number (issue 14 items 4-5): 20 seeds cover most of
    # the 92-98 band (the product's own commands on random clusters: test_fidelity).
    values = [rdma(sim(seed=seed), [R0])[0] for seed in range(20)]
    assert max(values) - min(values) >= 3.0 and min(values) >= 92.0 and max(values) <= 98.0
    first, second = sim(), sim()
    a0, a1 = rdma(first, [R0])[0], rdma(first, [R1])[0]
    b1, b0 = rdma(second, [R1])[0], rdma(second, [R0])[0]
    assert (a0, a1) == (b0, b1)


def test_rdma_latency_one_cable_a_switch_hop_and_software_forwarding() -> None:
    lat = {}
    for name in ("direct-2", "demo", "faults/switch_cpu_forwarding"):
        r = served(sim(name), "spark-2", "ib_write_lat -d rocep1s0f1 -F -p 18600", "spark-1", R0[4])
        lat[name] = round(parse_ib_write_lat(r.stdout).t_avg_us * 100)
    assert 142 <= lat["direct-2"] <= 152  # ~1.47 us, the published GB10 figure
    assert lat["direct-2"] < lat["demo"] <= 260
    assert lat["faults/switch_cpu_forwarding"] > 1500  # tens of microseconds via the switch CPU
