"""The evidence rules for miscabling, a 100G link, the launch environment and a firewall."""

from __future__ import annotations

from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence, Site
from pytest_sparkfabric.diagnosis.miscabling import End, Wire, solve


def test_each_rule_names_its_objects_and_fix() -> None:
    ev = Evidence(
        miscabled=solve(
            [
                Wire(End("spark-2", 0), End("spark-3", 1)),
                Wire(End("spark-4", 0), End("spark-2", 1)),
            ],
            [
                Wire(End("spark-2", 1), End("spark-3", 1)),
                Wire(End("spark-4", 0), End("spark-2", 0)),
            ],
        ),
        slow_links=(
            Site("spark-1:rail0 at 100000Mb/s", ("spark-1",)),
            Site("spark-2:rail0 at 100000Mb/s", ("spark-2",)),
        ),
        launch=(Site("NCCL_SOCKET_IFNAME=eth0 selects nothing", ("spark-3",)),),
        refused=(Site("servers listened on spark-4 but ...", ("spark-4",)),),
    )
    found = {f.rule.id: f for f in diagnose(ev)}
    assert list(found) == ["miscabled", "speed_degraded", "nccl_socket_ifname", "firewall"]
    mis = found["miscabled"]
    assert mis.concerns(["spark-4"]) and not mis.concerns(["spark-1"])
    assert [o.id for o in mis.objects] == ["spark-2:p0<->spark-3:p1", "spark-4:p0<->spark-2:p1"]
    assert mis.render().endswith("Fix: exchange the two cables in spark-2 port 0 and port 1.")
    speed = found["speed_degraded"]
    assert speed.where == "spark-1:rail0 at 100000Mb/s, spark-2:rail0 at 100000Mb/s"
    assert "a breakout on the Spark side" in speed.render()
    assert found["nccl_socket_ifname"].nodes == ("spark-3",)
    assert found["firewall"].concerns(["spark-1", "spark-4"])


def test_no_evidence_no_finding() -> None:
    assert diagnose(Evidence()) == []
