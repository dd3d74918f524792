"""Host QoS read (measure/qos.py): mlnx_qos first (tests/suite/test_runs.py's pfc-* rows read it
through the suite), iproute2 dcb where it is missing, "not measured" where neither is installed,
never "PFC off" by omission."""

from __future__ import annotations

from pytest_sparkfabric.measure import qos
from pytest_sparkfabric.measure.engine import Fabric
from tests.measure.onsim import Without
from tests.sim.conftest import example

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
