"""Cabling: LLDP's far ends matched to the MACs read from every node, against the plan, solved
into the physical mistakes of the simulated faults (two cables of one box exchanged, boxes out
of ring order, a cable in the other port)."""

from __future__ import annotations

from pytest_sparkfabric.cluster import Cluster
from pytest_sparkfabric.diagnosis.miscabling import End
from pytest_sparkfabric.measure import cabling
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.transport import Background, Job, RunResult, Transport
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, with_faults


def _fabric(cluster: Cluster) -> Fabric:
    return Fabric(cluster, SimTransport(cluster))


class NoLldpd(Transport):
    """The simulated cluster, where lldpd is not installed."""

    def __init__(self, inner: SimTransport) -> None:
        self.inner = inner
        self.clock = inner.clock

    def run(self, job: Job) -> RunResult:
        if "lldpctl" in job.command:
            return RunResult(job.node, job.command, 127, "", "sh: 1: lldpctl: not found\n", 0.0)
        return self.inner.run(job)

    def start(self, job: Job) -> Background:
        return self.inner.start(job)


def test_a_healthy_ring_has_every_planned_far_end_and_nothing_wrong() -> None:
    fabric = _fabric(example("ring-4"))
    ports = cabling.cabling(fabric).ports
    assert len(ports) == 8
    assert all(p.seen == p.planned and p.how.startswith("LLDP on ") for p in ports.values())
    assert ports[("spark-1", 0)].seen == End("spark-2", 1)
    assert cabling.cabling(fabric).mistakes == ()


def test_cable_swapped_says_exchange_the_two_cables() -> None:
    fabric = _fabric(with_faults("ring-4", "{fault: cable_swapped, node: spark-2}"))
    ports = cabling.cabling(fabric).ports
    wrong = sorted(k for k, p in ports.items() if p.seen != p.planned)
    assert wrong == [("spark-1", 0), ("spark-2", 0), ("spark-2", 1), ("spark-3", 1)]
    p = ports[("spark-2", 1)]
    assert p.seen == End("spark-3", 1)
    assert p.planned == End("spark-1", 0)
    (m,) = cabling.cabling(fabric).mistakes
    assert (m.kind, m.fix) == ("swap", "exchange the two cables in spark-2 port 0 and port 1")
    assert [o.id for o in m.objects] == ["spark-1:p0<->spark-2:p1", "spark-2:p0<->spark-3:p1"]


def test_ring_order_names_the_cabled_order() -> None:
    fabric = _fabric(with_faults("ring-4", "{fault: ring_order, node: spark-2}"))
    p = cabling.cabling(fabric).ports[("spark-1", 0)]
    assert (p.seen, p.planned) == (End("spark-3", 1), End("spark-2", 1))
    (m,) = cabling.cabling(fabric).mistakes
    assert m.kind == "order" and "(spark-1, spark-3, spark-2, spark-4)" in m.cause
    assert m.fix.startswith("re-cable the ring in the order spark-1, spark-2, spark-3, spark-4")
    ok = cabling.cabling(fabric).ports[("spark-1", 1)]
    assert ok.seen == ok.planned == End("spark-4", 0)


def test_one_cable_in_the_other_port_of_a_direct_pair() -> None:
    fabric = _fabric(with_faults("direct-2", "{fault: cable_swapped, node: spark-2}"))
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
    fabric = Fabric(cluster, NoLldpd(SimTransport(cluster)))
    ports = cabling.cabling(fabric).ports
    assert all(p.seen is None for p in ports.values())
    assert cabling.cabling(fabric).mistakes == ()
    assert "lldpctl" in ports[("spark-1", 0)].how and "not found" in ports[("spark-1", 0)].how
