"""The simulated `lldpctl`: lldpd's text, one neighbour per lit fabric netdev (a healthy ring's
and a swapped cable's far ends, read through measure/cabling: tests/measure/test_cabling.py; a
ring's swap or order as the suite reads it: the matrix's faults/cable_swapped, ring_order)."""

from __future__ import annotations

from pytest_sparkfabric.probes.lldp import parse_lldpctl
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import out, sim


def _far(t: SimTransport, node: str) -> dict[str, tuple[str | None, str | None]]:
    far = parse_lldpctl(out(t, node, "lldpctl")).neighbors
    return {n.local_port: (n.system_name, n.port_description) for n in far}


def test_the_port_id_is_the_far_netdevs_mac() -> None:
    t = sim()
    text = out(t, "spark-1", "lldpctl")
    n = parse_lldpctl(text).on("enp1s0f1np1")[0]
    assert n.neighbor_mac is not None and n.neighbor_mac in out(t, "spark-2", "ip -j link show")
    assert text.startswith("-" * 79 + "\nLLDP neighbors:\n")


def test_a_down_cable_hears_nothing_and_a_switch_port_is_not_modelled() -> None:
    assert _far(sim("direct-2", "{fault: link_down, node: spark-2, port: 1}"), "spark-1") == {}
    assert _far(sim("switch-8"), "spark-1") == {}
