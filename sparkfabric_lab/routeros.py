"""The lab switch's RouterOS REST API: the simulator's switch, served over real HTTP.

    python -m sparkfabric_lab.routeros --cluster SIM.yaml --state STATE.json \\
        --listen IP [--port 80] [--user NAME]

Runs in the switch namespace, bound to its management address, so the plugin's REST client
reads the switch as it reads a real one: HTTP with Basic auth, `GET /rest/...` and
`POST /rest/.../print|monitor`, every JSON value a string, errors as RouterOS sends them. The
answers are `SimSwitch`'s, on the same clock as the simulated tools (wall time since the start
stamp in the lab's simulator state).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkfabric_sim.model import SimCluster


class WallClock:
    """The simulator tool's clock: seconds since the lab's simulator state began."""

    def __init__(self, start: float) -> None:
        self.start = start

    def now(self) -> float:
        return time.time() - self.start

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


def read_state(path: Path) -> dict[str, Any]:
    """The simulator state, created (start stamp now) when no tool has run yet."""
    with path.open("a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        text = fh.read()
        state: dict[str, Any] = json.loads(text) if text.strip() else {}
        if "start" not in state:
            state.setdefault("start", time.time())
            state.setdefault("loads", {})
            state.setdefault("servers", {})
            fh.seek(0)
            fh.truncate()
            fh.write(json.dumps(state))
        return state


class Switch:
    def __init__(self, model: SimCluster, state_path: Path, user: str) -> None:
        self.model = model
        self.state_path = state_path
        self.user = user

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        from sparkfabric_sim.switch import RestError, SimSwitch
        from sparkfabric_sim.world import World

        state = read_state(self.state_path)
        world = World(self.model)
        for node, loads in state.get("loads", {}).items():
            world.runtime.loads[node] = [list(x) for x in loads]
        switch = SimSwitch(world, WallClock(float(state["start"])))
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sparkfabric_lab.routeros")
    p.add_argument("--cluster", required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--listen", required=True)
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--user", default="")
    a = p.parse_args(argv)
    from pytest_sparkfabric.cluster import load_cluster
    from sparkfabric_sim.model import SimCluster

    model = SimCluster.from_cluster(load_cluster(a.cluster))
    switch = Switch(model, Path(a.state), a.user)
    server = ThreadingHTTPServer((a.listen, a.port), handler_for(switch))
    server.daemon_threads = True
    print(f"RouterOS REST (simulated) on http://{a.listen}:{a.port}/rest", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
