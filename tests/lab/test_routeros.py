"""The lab switch's RouterOS REST endpoint, on loopback (no root needed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.transport.rest import RestClient, SwitchError, SwitchUnreachable
from sparkfabric_lab import files
from sparkfabric_lab.assemble import build_plan
from sparkfabric_lab.routeros import Switch, handler_for
from tests.lab.labkit import cluster_file
from tests.lab.test_plan import MGMT


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[int]:
    from http.server import ThreadingHTTPServer

    from sparkfabric_sim.model import SimCluster
    from sparkfabric_sim.tool import WallSim

    path = cluster_file(tmp_path, "switch-4", faults=[{"fault": "link_down", "node": "spark-3"}])
    raw = yaml.safe_load(path.read_text())
    plan = build_plan(load_cluster(path), prefix="sf-", mgmt=MGMT)
    sim = tmp_path / "sim-cluster.yaml"
    sim.write_text(files.dump_yaml(files.sim_cluster(raw, plan), "sim", str(path)))
    switch = Switch(WallSim(SimCluster.from_cluster(load_cluster(sim))), "sparkfabric")
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(switch))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_the_plugin_reads_the_lab_switch_over_http(endpoint: int) -> None:
    client = RestClient("127.0.0.1", "sparkfabric", "", port=80, allow_http=True)
    client.base = f"http://127.0.0.1:{endpoint}/rest"
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


def test_only_the_configured_user_gets_in(endpoint: int) -> None:
    client = RestClient("127.0.0.1", "admin", "", port=80, allow_http=True)
    client.base = f"http://127.0.0.1:{endpoint}/rest"
    with pytest.raises(SwitchUnreachable, match="authentication failed"):
        client.get("/system/resource")
