"""The evidence rules for miscabling, a 100G link, the launch environment and a firewall."""

from __future__ import annotations

from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence, Miscabled, Site


def test_each_rule_names_its_objects_and_fix() -> None:
    ev = Evidence(
        miscabled=(
            Miscabled(
                "spark-2 port 1",
                ("spark-2", "spark-3", "spark-4"),
                "cabled spark-2 port 1 <-> spark-4 port 0, cluster.yaml says spark-3 port 1",
                "exchange the two cables in spark-2 port 0 and port 1",
            ),
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
    assert mis.render().endswith("Fix: exchange the two cables in spark-2 port 0 and port 1.")
    speed = found["speed_degraded"]
    assert speed.where == "spark-1:rail0 at 100000Mb/s, spark-2:rail0 at 100000Mb/s"
    assert "a breakout on the Spark side" in speed.render()
    assert found["nccl_socket_ifname"].nodes == ("spark-3",)
    assert found["firewall"].concerns(["spark-1", "spark-4"])


def test_no_evidence_no_finding() -> None:
    assert diagnose(Evidence()) == []
