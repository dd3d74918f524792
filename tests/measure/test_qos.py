"""Host QoS read (measure/qos.py): mlnx_qos first (tests/suite/test_runs.py's pfc-* rows read it
through the suite), iproute2 dcb where it is missing, "not measured" where neither is installed,
never "PFC off" by omission."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

import pytest

from pytest_sparkfabric.measure import counters, qos
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.outcome import NotMeasured
from tests.measure.onsim import Without
from tests.sim.conftest import example

if TYPE_CHECKING:
    from pytest_sparkfabric.verdict import Verdict

DCB_PFC3 = (
    "pfc-cap 8 macsec-bypass off delay 4096\n"
    "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n"
)


def _fabric(missing: set[str]) -> Fabric:
    cluster = example("direct-2")
    return Fabric(cluster, Without(cluster, missing, {"dcb": DCB_PFC3}))


def test_dcb_is_read_where_mlnx_qos_is_missing_and_neither_is_not_measured() -> None:
    q = qos.node_qos(_fabric({"mlnx_qos"}), "spark-2").get()
    assert (q.pfc_priorities, q.trust, q.describe()) == ((3,), None, "PFC on priority 3 (dcb)")
    m = qos.node_qos(_fabric({"mlnx_qos", "dcb"}), "spark-1")
    gap = m.unmeasured
    assert m.value is None and gap is not None
    assert gap.reason == (
        "spark-1 has neither mlnx_qos (mlnx-tools) nor dcb (iproute2) to read enp1s0f1np1's PFC"
    )
    assert (gap.missing, gap.nodes) == ("mlnx_qos or dcb", ("spark-1",))


def test_a_lossless_rail_without_its_hw_counters_is_not_measured_not_passed() -> None:
    """Its sequence errors live only in the RDMA hw_counters: a failed read is never a pass."""
    fabric = _fabric({"mlnx_qos"})  # dcb: PFC on priority 3, lossless
    rail = fabric.cluster.rails[0]
    eth, hw = fabric.run_all(counters.rail_jobs([rail]))
    refused = replace(hw, rc=2, stdout="", stderr="grep: hw_counters/*: Permission denied\n")
    a, b = (
        counters.rail_reads([rail], [eth, r], t)[rail.id] for t, r in ((0.0, hw), (9.0, refused))
    )
    assert isinstance(a, counters.Snapshot) and isinstance(b, counters.Snapshot)
    assert a.partial is None and b.values and not any(k.startswith("hw:") for k in b.values)
    verdict = cast("Verdict", None)  # no failure to report: never called
    counters.check(fabric, rail, verdict, [counters.window("rdma", "round 1", a, a)])
    with pytest.raises(NotMeasured) as gap:
        counters.check(fabric, rail, verdict, [counters.window("rdma", "round 2", a, b)])
    assert gap.value.reason == (
        "spark-1 enp1s0f1np1 (rail0), lossless (PFC on priority 3 (dcb)), during round 2: no RDMA "
        "hw_counters, so no sequence error can be judged; spark-1: hw_counters failed (rc 2): "
        "grep: hw_counters/*: Permission denied"
    )
