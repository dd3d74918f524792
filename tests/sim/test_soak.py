"""The heat soak in virtual time: temperatures under GPU load, the lanes each cable form uses, the
marginal lane."""

from __future__ import annotations

from pytest_sparkfabric.probes.ethtool import parse_ethtool_module, parse_ethtool_stats
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import out, sim, with_faults

LANE = "{fault: lane_degradation, node: spark-2, lane: 2}"
HWMON = "grep -h . /sys/class/net/enp1s0f1np1/device/hwmon/*/temp1_input"
PING = "ping -c 2 -W 1 -I enp1s0f1np1 192.168.100.12"
Sample = tuple[float, list[float], int, str]


def stats(t: SimTransport) -> dict[str, int]:
    return dict(parse_ethtool_stats(out(t, "spark-2", "ethtool -S enp1s0f1np1")).items())


def soak(t: SimTransport, seconds: int, burn: bool = True) -> list[Sample]:
    """Sample spark-2's receive lanes every 10 s: (time, lane rates, link downs, carrier)."""
    for node in ("spark-1", "spark-2") if burn else ():
        t.start(Job(node, f"gpu_burn -m 80% {seconds}", seconds + 60))
    start = t.clock.now()
    samples: list[Sample] = []
    prev: tuple[float, list[int]] | None = None
    while t.clock.now() - start < seconds:
        now, s = t.clock.now(), stats(t)
        lanes = [s[f"rx_err_lane_{i}_phy"] for i in range(4)]
        carrier = out(t, "spark-1", "cat /sys/class/net/enp1s0f1np1/carrier").strip()
        if prev is not None:
            rates = [(a - b) / (now - prev[0]) for a, b in zip(lanes, prev[1], strict=True)]
            samples.append((now - start, rates, s["link_down_events_phy"], carrier))
        prev = (now, lanes)
        out(t, "spark-1", "sleep 10")
    return samples


def test_healthy_cable_trickles_on_two_lanes_while_everything_heats_up() -> None:
    t = sim()
    samples = soak(t, 600)
    assert all(s[2] == 0 and s[3] == "1" for s in samples)
    assert all(0 < r[0] < 10 and 0 < r[1] < 10 and r[2] == r[3] == 0 for _, r, _, _ in samples)
    gpu = out(t, "spark-2", "nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader")
    assert 80_000 <= int(out(t, "spark-2", HWMON)) <= 84_000 and 75 <= int(gpu) <= 81


def test_marginal_lane_explodes_with_heat_then_the_link_drops() -> None:
    t = SimTransport(with_faults("direct-2", LANE))
    samples = soak(t, 300)
    before = [s for s in samples if s[2] == 0]
    after = [s for s in samples if s[2] == 1]
    assert before and after and 150 <= after[0][0] <= 240
    warning = [r for _, r, _, _ in before if r[2] >= 1000 * max(r[0], r[1])]
    assert warning and warning[0][2] < 20_000
    assert max(r[2] for _, r, _, _ in before) > 1e6
    assert all(s[3] == "0" for s in after)
    assert "0 received, +2 errors, 100% packet loss" in out(t, "spark-1", PING, rc=1)
    out(t, "spark-1", "sleep 600", 700)
    # Cooled down, the link trains again; the outage stays counted.
    assert "2 packets transmitted, 2 received, 0% packet loss" in out(t, "spark-1", PING)
    assert stats(t)["link_down_events_phy"] == 1
    # without GPU load the marginal lane stays quiet
    cool = soak(SimTransport(with_faults("direct-2", LANE)), 300, burn=False)
    assert all(s[2] == 0 and s[1][2] == 0 for s in cool)


def test_rx_bits_phy_when_the_kernel_has_it() -> None:
    text = out(sim(), "spark-2", "ethtool -S enp1s0f1np1")
    assert "rx_bits_phy" not in text and "rx_corrected_bits_phy" in text
    t = SimTransport(with_faults("direct-2", LANE), rx_bits_phy=True)
    t.start(Job("spark-2", "gpu_burn 600", 700))

    def window_ber(start: float) -> float:
        out(t, "spark-1", f"sleep {start - t.clock.now()}", 300)
        a = stats(t)
        out(t, "spark-1", "sleep 10")
        b = stats(t)
        bits = b["rx_bits_phy"] - a["rx_bits_phy"]
        assert 9.9 < bits / 200e9 < 10.2
        return (b["rx_corrected_bits_phy"] - a["rx_corrected_bits_phy"]) / bits

    assert window_ber(60) < 1e-10
    assert window_ber(175) > 2.4e-6


def test_steady_lane_keeps_its_rate_and_never_drops_the_link() -> None:
    steady = "{fault: lane_degradation, node: spark-2, lane: 1, rate_per_s: 3000}"
    samples = soak(sim("direct-2", steady), 300)
    assert all(s[2] == 0 and s[3] == "1" for s in samples)
    assert all(2990 < r[1] < 3010 and 0 < r[0] < 10 for _, r, _, _ in samples)


def test_hot_nic_runs_hot_at_idle_and_past_its_limit_under_load() -> None:
    t = sim("direct-2", "{fault: hot_nic, node: spark-1}")
    assert 92_000 <= int(out(t, "spark-1", HWMON)) <= 94_000
    assert int(out(t, "spark-2", HWMON)) < 60_000
    soak(t, 300)
    assert int(out(t, "spark-1", HWMON)) > 105_000


def test_cable_form_follows_the_hardware() -> None:
    """Spark to Spark: QSFP112 DAC, two 100G lanes trickle; Spark to switch leg: QSFP56
    breakout, four 50G lanes trickle (DOMAIN.md sections 6-7, 9)."""
    for name, part, lanes in (("direct-2", "NJAAKK-N911", 2), ("demo", "QDD-2Q56-PC01", 4)):
        t = sim(name, seed=7)
        cable = t.model.cable_of("spark-1", 1)
        assert cable is not None and cable.spec.lanes_in_use == tuple(range(lanes))
        out(t, "spark-1", "sleep 120", 200)
        module = parse_ethtool_module(out(t, "spark-1", "ethtool -m enp1s0f1np1"))
        assert module.vendor_pn == part
    # The direct cable's two lanes: the healthy soak above.
    s = parse_ethtool_stats(out(t, "spark-1", "ethtool -S enp1s0f1np1"))
    assert all(s[f"rx_err_lane_{i}_phy"] > 0 for i in range(4))
