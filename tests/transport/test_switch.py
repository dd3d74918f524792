"""The read-only RouterOS client: REST with Basic auth and deadlines, recorded and replayed by
the transports that hand it out."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_sparkfabric.cluster.spec import SwitchSpec
from pytest_sparkfabric.measure.switch import read_switch
from pytest_sparkfabric.transport import Background, Job, RunResult, Transport, VirtualClock
from pytest_sparkfabric.transport.record import RecordingTransport, ReplayTransport
from pytest_sparkfabric.transport.switch import (
    RestClient,
    SwitchClient,
    SwitchError,
    SwitchUnreachable,
)

USER, PASSWORD = "sparkfabric", "s3cret"
ETHERNET = [
    {
        ".id": "*1",
        "name": "qsfp56-dd-1-1",
        "mtu": "9000",
        "l2mtu": "9216",
        "auto-negotiation": "false",
        "speed": "200G-baseCR4",
        "running": "true",
        "disabled": "false",
    }
]
MONITOR = [{"name": "qsfp56-dd-1-1", "status": "link-ok", "rate": "200Gbps", "fec": "fec91"}]


class _Handler(BaseHTTPRequestHandler):
    calls: ClassVar[list[tuple[str, str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _authorised(self) -> bool:
        token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.headers.get("Authorization") == f"Basic {token}":
            return True
        self._reply(401, {"error": 401, "message": "Unauthorized"})
        return False

    def _reply(self, code: int, body: object) -> None:
        raw = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        # The client may have given up first (the deadline test).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(raw)

    def do_GET(self) -> None:
        self.calls.append(("GET", self.path, None))
        if not self._authorised():
            return
        if self.path == "/rest/interface/ethernet":
            self._reply(200, ETHERNET)
        elif self.path == "/rest/slow":
            time.sleep(1.5)
            self._reply(200, [])
        else:
            self._reply(400, {"error": 400, "message": "Bad Request", "detail": "no such command"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.calls.append(("POST", self.path, body))
        if not self._authorised():
            return
        if self.path == "/rest/interface/ethernet/monitor" and body.get("once") == "":
            self._reply(200, MONITOR)
        else:
            self._reply(400, {"error": 400, "message": "Bad Request"})


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()  # one poll interval (0.5 s), so once per module
        httpd.server_close()
        thread.join(5)


def _client(port: int, password: str = PASSWORD, timeout_s: float = 5.0) -> RestClient:
    return RestClient(
        "127.0.0.1", USER, password, port=port, scheme="http", timeout_s=timeout_s, allow_http=True
    )


def test_rest_get_and_post_with_basic_auth(server: int) -> None:
    client = _client(server)
    assert client.get("/interface/ethernet") == ETHERNET
    assert client.post("/interface/ethernet/monitor", {"numbers": "x", "once": ""}) == MONITOR
    assert _Handler.calls[-1] == (
        "POST",
        "/rest/interface/ethernet/monitor",
        {"numbers": "x", "once": ""},
    )


def test_rest_wrong_password_says_what_to_check(server: int) -> None:
    with pytest.raises(SwitchUnreachable, match=r"authentication failed for user 'sparkfabric'"):
        _client(server, password="wrong").get("/interface/ethernet")


def test_rest_error_detail_is_kept(server: int) -> None:
    with pytest.raises(SwitchError, match=r"HTTP 400 Bad Request: no such command"):
        _client(server).get("/nope")


def test_rest_call_has_a_deadline(server: int) -> None:
    start = time.monotonic()
    with pytest.raises(SwitchUnreachable, match=r"no answer within 0.3 s|timed out"):
        _client(server, timeout_s=0.3).get("/slow")
    assert time.monotonic() - start < 2


def test_rest_connection_refused() -> None:
    with pytest.raises(SwitchUnreachable, match=r"refused"):
        _client(1, timeout_s=2).get("/interface/ethernet")


def test_https_url_and_port() -> None:
    assert RestClient("10.0.0.2", "u", "p").base == "https://10.0.0.2/rest"
    assert RestClient("10.0.0.2", "u", "p", port=8443).base == "https://10.0.0.2:8443/rest"
    assert RestClient("10.0.0.2", "u", "p", port=80, allow_http=True).base == "http://10.0.0.2/rest"


def test_read_switch_isolates_a_failing_read(server: int) -> None:
    state = read_switch(_client(server), ["qsfp56-dd-1-1"])
    port = state.ethernet.get()["qsfp56-dd-1-1"]
    assert (port.mtu_bytes, port.l2mtu_bytes, port.auto_negotiation) == (9000, 9216, False)
    mon = state.monitor["qsfp56-dd-1-1"].get()
    assert (mon.status, mon.rate_gbps, mon.fec) == ("link-ok", 200.0, "fec91")
    # The fake has no bridge, QoS or resource menus: those parts say why, the rest stands.
    assert state.bridge_ports.error is not None and "no such command" in state.bridge_ports.error
    assert state.qos.error is not None


def test_unreachable_switch_fails_the_whole_read() -> None:
    with pytest.raises(SwitchUnreachable):
        read_switch(_client(1, timeout_s=2), ["qsfp56-dd-1-1"])


class _RestOnly(Transport):
    """A transport with no nodes whose switch is the test's REST server."""

    def __init__(self, port: int) -> None:
        self.clock = VirtualClock()
        self.port = port

    def run(self, job: Job) -> RunResult:
        raise AssertionError("no node commands here")

    def start(self, job: Job) -> Background:
        raise AssertionError("no node commands here")

    def switch_client(self, spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
        return _client(self.port)


SPEC = SwitchSpec(host="127.0.0.1", user=USER, ports={"spark-1": "qsfp56-dd-1-1"})


def test_record_then_replay_gives_the_same_answers(server: int, tmp_path: Path) -> None:
    folder = tmp_path / "recording"
    recorder = RecordingTransport(_RestOnly(server), folder).switch_client(SPEC)
    recorded = read_switch(recorder, ["qsfp56-dd-1-1"])
    path = folder / "switch" / "rest.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {
        "key": '["GET", "/interface/ethernet", null]',
        "reply": ETHERNET,
    }
    assert any(line.get("error") and line["unreachable"] is False for line in lines)
    replayed = read_switch(ReplayTransport(folder).switch_client(SPEC), ["qsfp56-dd-1-1"])
    assert replayed == recorded
    with pytest.raises(SwitchUnreachable, match=f"no recording of GET /interface/bridge in {path}"):
        ReplayTransport(folder).switch_client(SPEC).get("/interface/bridge")
