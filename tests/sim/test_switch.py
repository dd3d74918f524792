"""The simulated switch answers RouterOS REST reads: shapes, string values, errors (what its
faults change, as the suite reads it: the fault matrix)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import routeros
from sparkfabric_sim.switch import RestError, SimSwitch
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, record, table, with_faults

READS = (
    "/rest/interface/ethernet",
    "/rest/interface/bridge",
    "/rest/interface/bridge/port",
    "/rest/interface/ethernet/switch/qos/port",
    "/rest/system/resource",
)


def switch(*faults: str) -> SimSwitch:
    t = SimTransport(with_faults("demo", *faults) if faults else example("demo"))
    assert t.switch is not None
    return t.switch


@pytest.mark.parametrize("path", READS)
def test_every_value_is_a_string(path: str) -> None:
    reply = switch().rest_get(path)
    rows = reply if isinstance(reply, list) else [reply]
    assert rows and all(isinstance(v, str) for row in rows for v in row.values())


def test_healthy_legs_bridge_and_qos() -> None:
    sw = switch()
    eth = {
        p.name: p for p in routeros.ethernet_from_rest(table(sw.rest_get("/interface/ethernet")))
    }
    for leg in ("qsfp56-dd-1-1", "qsfp56-dd-1-5", "qsfp56-dd-2-1", "qsfp56-dd-2-5"):
        port = eth[leg]
        assert (port.auto_negotiation, port.speed, port.running) == (False, "200G-baseCR4", True)
        assert (port.mtu_bytes, port.l2mtu_bytes) == (9000, 9216)
    assert eth["qsfp56-dd-1-2"].running is False
    bridge = routeros.bridge_ports_from_rest(table(sw.rest_get("/rest/interface/bridge/port")))
    assert len(bridge) == 4 and all(p.hw_offload and p.hw_requested for p in bridge)
    qos = routeros.qos_ports_from_rest(
        table(sw.rest_get("/rest/interface/ethernet/switch/qos/port"))
    )
    assert {(q.trust_l3, q.pfc) for q in qos} == {("ignore", "disabled")}
    assert all(not q.limited_queues() for q in qos)
    resource = routeros.system_resource_from_kv(record(sw.rest_get("/rest/system/resource")))
    assert resource.board_name == "CRS804-4DDQ" and (resource.cpu_load_pct or 0) < 10


def test_monitor_once_and_stats() -> None:
    sw = switch()
    rows = sw.rest_post(
        "/rest/interface/ethernet/monitor", {"numbers": "qsfp56-dd-1-1,qsfp56-dd-2-5", "once": ""}
    )
    assert isinstance(rows, list) and len(rows) == 2
    mon = routeros.ethernet_monitor_from_kv(rows[0])
    assert (mon.status, mon.rate_gbps, mon.fec, mon.auto_negotiation) == (
        "link-ok",
        200.0,
        "fec91",
        "disabled",
    )
    stats = sw.rest_post("/rest/interface/ethernet/print", {"stats": ""})
    assert isinstance(stats, list)
    assert {row["rx-fcs-error"] for row in stats} == {"0"}


def test_errors_look_like_routeros_http_errors() -> None:
    sw = switch()
    with pytest.raises(RestError) as missing:
        sw.rest_get("/rest/interface/nothing")
    assert missing.value.status == 404 and missing.value.body["message"] == "Not Found"
    with pytest.raises(RestError) as no_once:
        sw.rest_post("/rest/interface/ethernet/monitor", {"numbers": "qsfp56-dd-1-1"})
    assert no_once.value.status == 400
    with pytest.raises(RestError):
        sw.rest_post("/rest/interface/ethernet/monitor", {"numbers": "nope", "once": ""})
