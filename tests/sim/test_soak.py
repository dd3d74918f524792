"""The heat soak in virtual time: temperatures under GPU load and the marginal lane."""

from __future__ import annotations

from pytest_sparkfabric.probes.ethtool import parse_ethtool_stats
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, with_faults

LANE = "{fault: lane_degradation, node: spark-2, lane: 2}"


def soak(t: SimTransport, seconds: int, burn: bool) -> list[tuple[float, list[float], int, str]]:
    """Sample spark-2's receive lanes every 10 s: (time, lane rates, link downs, carrier)."""
    if burn:
        for node in ("spark-1", "spark-2"):
            t.start(Job(node, f"gpu_burn -m 80% {seconds}", seconds + 60))
    start = t.clock.now()
    samples: list[tuple[float, list[float], int, str]] = []
    prev: tuple[float, list[int]] | None = None
    while t.clock.now() - start < seconds:
        now = t.clock.now()
        stats = parse_ethtool_stats(t.run(Job("spark-2", "ethtool -S enp1s0f1np1", 10)).stdout)
        lanes = [stats[f"rx_err_lane_{i}_phy"] for i in range(4)]
        carrier = t.run(Job("spark-1", "cat /sys/class/net/enp1s0f1np1/carrier", 10)).stdout
        if prev is not None:
            rates = [(a - b) / (now - prev[0]) for a, b in zip(lanes, prev[1], strict=True)]
            samples.append((now - start, rates, stats["link_down_events_phy"], carrier.strip()))
        prev = (now, lanes)
        t.run(Job("spark-1", "sleep 10", 20))
    return samples


def test_healthy_cable_trickles_on_two_lanes_while_everything_heats_up() -> None:
    t = SimTransport(example("direct-2"))
    samples = soak(t, 600, burn=True)
    assert all(s[2] == 0 and s[3] == "1" for s in samples)
    assert all(0 < r[0] < 10 and 0 < r[1] < 10 and r[2] == r[3] == 0 for _, r, _, _ in samples)
    nic = int(
        t.run(
            Job("spark-2", "grep -h . /sys/class/net/enp1s0f1np1/device/hwmon/*/temp1_input", 10)
        ).stdout
    )
    gpu = t.run(Job("spark-2", "nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader", 10))
    assert 80_000 <= nic <= 84_000 and 75 <= int(gpu.stdout) <= 81


def test_marginal_lane_explodes_with_heat_then_the_link_drops() -> None:
    t = SimTransport(with_faults("direct-2", LANE))
    samples = soak(t, 300, burn=True)
    before = [s for s in samples if s[2] == 0]
    after = [s for s in samples if s[2] == 1]
    assert before and after
    drop_at = after[0][0]
    assert 150 <= drop_at <= 240
    warning = [r for _, r, _, _ in before if r[2] >= 1000 * max(r[0], r[1])]
    assert warning and warning[0][2] < 20_000
    assert max(r[2] for _, r, _, _ in before) > 1e6
    assert all(s[3] == "0" for s in after)
    ping = t.run(Job("spark-1", "ping -c 2 -W 1 -I enp1s0f1np1 192.168.100.12", 30))
    assert ping.rc == 1
    t.run(Job("spark-1", "sleep 600", 700))
    # Cooled down, the link trains again; the outage stays counted.
    ping = t.run(Job("spark-1", "ping -c 2 -W 1 -I enp1s0f1np1 192.168.100.12", 30))
    assert ping.rc == 0
    stats = parse_ethtool_stats(t.run(Job("spark-2", "ethtool -S enp1s0f1np1", 10)).stdout)
    assert stats["link_down_events_phy"] == 1


def test_marginal_lane_stays_quiet_without_gpu_load() -> None:
    t = SimTransport(with_faults("direct-2", LANE))
    samples = soak(t, 300, burn=False)
    assert all(s[2] == 0 and s[1][2] == 0 for s in samples)


def test_rx_bits_phy_when_the_kernel_has_it() -> None:
    plain = SimTransport(example("direct-2"))
    text = plain.run(Job("spark-2", "ethtool -S enp1s0f1np1", 10)).stdout
    assert "rx_bits_phy" not in text and "rx_corrected_bits_phy" in text
    t = SimTransport(with_faults("direct-2", LANE), rx_bits_phy=True)
    t.start(Job("spark-2", "gpu_burn 600", 700))

    def window_ber(start: float) -> float:
        t.run(Job("spark-1", f"sleep {start - t.clock.now()}", 300))
        a = parse_ethtool_stats(t.run(Job("spark-2", "ethtool -S enp1s0f1np1", 10)).stdout)
        t.run(Job("spark-1", "sleep 10", 20))
        b = parse_ethtool_stats(t.run(Job("spark-2", "ethtool -S enp1s0f1np1", 10)).stdout)
        assert 9.9 < (b["rx_bits_phy"] - a["rx_bits_phy"]) / 200e9 < 10.2
        return (b["rx_corrected_bits_phy"] - a["rx_corrected_bits_phy"]) / (
            b["rx_bits_phy"] - a["rx_bits_phy"]
        )

    assert window_ber(60) < 1e-10
    assert window_ber(175) > 2.4e-6


def test_steady_lane_keeps_its_rate_and_never_drops_the_link() -> None:
    t = SimTransport(
        with_faults(
            "direct-2", "{fault: lane_degradation, node: spark-2, lane: 1, rate_per_s: 3000}"
        )
    )
    samples = soak(t, 300, burn=True)
    assert all(s[2] == 0 and s[3] == "1" for s in samples)
    assert all(2990 < r[1] < 3010 and 0 < r[0] < 10 for _, r, _, _ in samples)


def test_hot_nic_runs_hot_at_idle_and_past_its_limit_under_load() -> None:
    t = SimTransport(with_faults("direct-2", "{fault: hot_nic, node: spark-1}"))
    hwmon = "grep -h . /sys/class/net/enp1s0f1np1/device/hwmon/*/temp1_input"
    assert 92_000 <= int(t.run(Job("spark-1", hwmon, 10)).stdout) <= 94_000
    assert int(t.run(Job("spark-2", hwmon, 10)).stdout) < 60_000
    soak(t, 300, burn=True)
    assert int(t.run(Job("spark-1", hwmon, 10)).stdout) > 105_000
