"""The lab switch's RouterOS REST endpoint, on loopback (no root needed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.transport.rest import RestClient, SwitchError, SwitchUnreachable
from sparkfabric_lab.routeros import Switch, handler_for
from sparkfabric_sim.model import SimCluster
from sparkfabric_sim.tool import WallSim
from tests.lab.labkit import cluster_file
from tests.lab.test_plan import sim_cluster


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[int]:
    path = cluster_file(tmp_path, "switch-4", faults=[{"fault": "link_down", "node": "spark-3"}])
    sim = WallSim(SimCluster.from_cluster(load_cluster(sim_cluster(tmp_path, path))))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(Switch(sim, "sparkfabric")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _client(port: int, user: str) -> RestClient:
    return RestClient("127.0.0.1", user, "", port=port, scheme="http", allow_http=True)


def test_the_plugin_reads_the_lab_switch_over_http(endpoint: int) -> None:
    client = _client(endpoint, "sparkfabric")
    ports = {row["name"]: row for row in client.get("/interface/ethernet")}
    assert {"qsfp56-dd-1-1", "qsfp56-dd-2-1"} <= ports.keys()
    assert all(isinstance(v, str) for row in ports.values() for v in row.values())
    legs = client.post("/interface/ethernet/monitor",
                       {"numbers": "qsfp56-dd-1-1,qsfp56-dd-2-1", "once": ""})  # fmt: skip
    status = {row["name"]: row.get("status") for row in legs}
    assert status["qsfp56-dd-1-1"] == "link-ok"
    assert status["qsfp56-dd-2-1"] != "link-ok"  # fault link_down on spark-3's leg
    with pytest.raises(SwitchError, match="HTTP 404"):
        client.get("/no/such/table")
    # only the configured user gets in
    with pytest.raises(SwitchUnreachable, match="authentication failed"):
        _client(endpoint, "admin").get("/system/resource")
