"""Cabling: LLDP's far ends matched to the MACs of every node, against the plan (a healthy ring's
every far end as planned, the ring faults' items, causes and fixes: the fault matrix's ring-4,
faults/cable_swapped and ring_order; the solver: tests/diagnosis/test_miscabling.py)."""

from __future__ import annotations

from pytest_sparkfabric.diagnosis.miscabling import End
from pytest_sparkfabric.measure import cabling
from pytest_sparkfabric.measure.engine import Fabric
from tests.measure.onsim import Without, sim_fabric
from tests.sim.conftest import example, with_faults


def test_one_cable_in_the_other_port_of_a_direct_pair() -> None:
    fabric = sim_fabric(with_faults("direct-2", "{fault: cable_swapped, node: spark-2}"))
    ports = cabling.cabling(fabric).ports
    lit = ports[("spark-2", 0)]
    assert lit.planned is None and lit.carrier and lit.seen == End("spark-1", 1)
    assert not ports[("spark-2", 1)].carrier
    far = ports[("spark-1", 1)]
    assert far.seen == End("spark-2", 0) and far.planned == End("spark-2", 1)
    (m,) = cabling.cabling(fabric).mistakes
    assert (m.kind, m.fix) == ("moved", "move the cable from spark-2 port 0 to spark-2 port 1")


def test_without_lldpd_the_far_end_is_not_identified_and_says_why() -> None:
    cluster = example("ring-4")
    found = cabling.cabling(Fabric(cluster, Without(cluster, {"lldpctl"}, {})))
    assert all(p.seen is None for p in found.ports.values()) and found.mistakes == ()
    how = found.ports[("spark-1", 0)].how
    assert "lldpctl" in how and "not found" in how
