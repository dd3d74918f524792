"""The lab switch's RouterOS REST API: the simulator's switch, served over real HTTP.

Served by the lab's resident simulator (lab/resident.py) in the switch namespace, bound to its
management address, so the plugin's REST client reads the switch as it reads a real one: HTTP
with Basic auth, `GET /rest/...` and `POST /rest/.../print|monitor`, every JSON value a string,
errors as RouterOS sends them. The answers are `SimSwitch`'s, on the clock and GPU loads of the
simulated tools.
"""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkfabric_sim.tool import WallSim


class Switch:
    def __init__(self, sim: WallSim, user: str) -> None:
        self.sim = sim
        self.user = user

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        from sparkfabric_sim.switch import RestError, SimSwitch

        switch = SimSwitch(self.sim.world(), self.sim)
        try:
            if method == "GET":
                return 200, switch.rest_get(path)
            return 200, switch.rest_post(path, body)
        except RestError as err:
            return err.status, err.body

    def authorized(self, header: str | None) -> bool:
        if not header or not header.startswith("Basic "):
            return False
        try:
            user = base64.b64decode(header[6:]).decode().split(":", 1)[0]
        except (ValueError, UnicodeDecodeError):
            return False
        return user == self.user


def handler_for(switch: Switch) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "RouterOS-lab"
        protocol_version = "HTTP/1.0"

        def _reply(self, status: int, data: Any) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _serve(self, method: str) -> None:
            if not switch.authorized(self.headers.get("Authorization")):
                self._reply(401, {"error": 401, "message": "Unauthorized"})
                return
            if not self.path.startswith("/rest/"):
                self._reply(404, {"error": 404, "message": "Not Found"})
                return
            body: dict[str, Any] = {}
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    self._reply(400, {"error": 400, "message": "Bad Request"})
                    return
            status, data = switch.answer(method, self.path, body)
            self._reply(status, data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler
