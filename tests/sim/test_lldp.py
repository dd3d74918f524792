"""The simulated `lldpctl`: lldpd's text, one neighbour per lit fabric netdev, following the
cables as the faults leave them (a ring's swap or order as the suite reads it: the fault matrix
pins faults/cable_swapped and faults/ring_order with their one fix each)."""

from __future__ import annotations

from pytest_sparkfabric.probes.lldp import parse_lldpctl
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import out, sim


def _far(t: SimTransport, node: str) -> dict[str, tuple[str | None, str | None]]:
    far = parse_lldpctl(out(t, node, "lldpctl")).neighbors
    return {n.local_port: (n.system_name, n.port_description) for n in far}


def test_a_healthy_ring_hears_the_next_and_previous_box() -> None:
    assert _far(sim("ring-4"), "spark-2") == {
        "enp1s0f0np0": ("spark-3", "enp1s0f1np1"),
        "enP2p1s0f0np0": ("spark-3", "enP2p1s0f1np1"),
        "enp1s0f1np1": ("spark-1", "enp1s0f0np0"),
        "enP2p1s0f1np1": ("spark-1", "enP2p1s0f0np0"),
    }


def test_the_port_id_is_the_far_netdevs_mac() -> None:
    t = sim()
    text = out(t, "spark-1", "lldpctl")
    n = parse_lldpctl(text).on("enp1s0f1np1")[0]
    assert n.neighbor_mac is not None and n.neighbor_mac in out(t, "spark-2", "ip -j link show")
    assert text.startswith("-" * 79 + "\nLLDP neighbors:\n")


def test_a_down_cable_hears_nothing_and_a_switch_port_is_not_modelled() -> None:
    assert _far(sim("direct-2", "{fault: link_down, node: spark-2, port: 1}"), "spark-1") == {}
    assert _far(sim("switch-8"), "spark-1") == {}


def test_cable_swapped_on_one_cable_lights_the_other_port() -> None:
    t = sim("direct-2", "{fault: cable_swapped, node: spark-2}")
    assert _far(t, "spark-1")["enp1s0f1np1"] == ("spark-2", "enp1s0f0np0")
    assert "LOWER_UP" in out(t, "spark-2", "ip -j link show enp1s0f0np0")
