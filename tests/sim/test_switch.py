"""The simulated switch answers RouterOS REST reads: shapes, string values, errors (its healthy
values and what its faults change, as the suite reads them: the fault matrix)."""

from __future__ import annotations

import pytest

from sparkfabric_sim.switch import RestError, SimSwitch
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, with_faults

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
