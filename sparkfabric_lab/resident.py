"""The lab's resident simulator: one process per lab answers every simulated tool call.

    python -m sparkfabric_lab.resident --cluster SIM.yaml --socket PATH --lab-dir DIR \\
        [--listen IP --port N --user NAME] [--no-delay]

The model is loaded once; each node's tool wrapper (lab/toolcall.py, started by the node's real
supervisor over real ssh) sends its node and argv over the unix socket and gets one JSON line
back (stdout, stderr, exit status: lab/toolcall.py has the wire) after the modelled duration.
A server (ib_write_bw without a peer) gets its banner first and the rest once a client's call
has answered it. A
caller that hangs up early (its command was killed) ends its GPU load at that moment. With
`--listen`, run in the switch namespace, the same process serves the switch's RouterOS REST
(lab/routeros.py) on the same clock and GPU loads.

It ends with its lab: on SIGTERM (`lab down`), when its namespace is deleted, and when the lab
dir's lab.json is gone (a lab removed from under it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import socket
import socketserver
import sys
import threading
import traceback
from pathlib import Path
from types import FrameType

from sparkfabric_lab.state import STATE_FILE
from sparkfabric_lab.toolcall import frame
from sparkfabric_sim.tool import WallSim

WATCH_S = 2.0


def _hung_up(conn: socket.socket, seconds: float) -> bool:
    """Wait up to `seconds` for the caller; True when it hung up (or sent anything) first."""
    readable, _, _ = select.select([conn], [], [], max(0.0, seconds))
    return bool(readable)


def _send(conn: socket.socket, out: str = "", err: str = "", rc: int | None = None) -> None:
    frames = [frame(b"o", out.encode()) if out else b"", frame(b"e", err.encode()) if err else b""]
    if rc is not None:
        frames.append(frame(b"r", b"%d" % rc))
    conn.sendall(b"".join(frames))


def handler_for(sim: WallSim, *, delay: bool) -> type[socketserver.BaseRequestHandler]:
    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            try:
                size = int(self.rfile.readline())
                node, *argv = self.rfile.read(size).decode("utf-8", "surrogateescape").split("\0")
            except (ValueError, UnicodeDecodeError) as err:
                _send(self.connection, err=f"sparkfabric lab: bad tool call: {err}\n", rc=2)
                return
            try:
                self._answer(node, argv)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the caller was killed while we answered
            except Exception:  # the simulator's bug: the caller says so, the lab keeps running
                why = traceback.format_exc(limit=-3)
                _send(self.connection, err=f"sparkfabric lab: simulator error in {argv[:1]}:\n"
                      f"{why}", rc=1)  # fmt: skip

        def _answer(self, node: str, argv: list[str]) -> None:
            conn = self.connection
            call = sim.call(node, argv)
            out = call.outcome
            if call.server is not None:
                _send(conn, out=out.partial)
                done = sim.served(call.server, lambda: _hung_up(conn, 0))
                if done is not None:
                    rc, stdout = done
                    rest = stdout[len(out.partial) :] if stdout.startswith(out.partial) else stdout
                    _send(conn, out=rest, rc=rc)
                return
            if delay and _hung_up(conn, out.duration_s):
                sim.end_loads(node, call.start)
                return
            _send(conn, out=out.stdout, err=out.stderr, rc=out.rc)

    return Handler


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def _bind(path: Path, sim: WallSim, *, delay: bool) -> _Server:
    # A unix socket path holds at most 107 bytes: bind by its name from inside its folder.
    os.chdir(path.parent)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path.name)
    return _Server(path.name, handler_for(sim, delay=delay))


def _serve_rest(sim: WallSim, listen: str, port: int, user: str) -> None:
    from http.server import ThreadingHTTPServer

    from sparkfabric_lab.routeros import Switch
    from sparkfabric_lab.routeros import handler_for as rest_handler

    server = ThreadingHTTPServer((listen, port), rest_handler(Switch(sim, user)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"RouterOS REST (simulated) on http://{listen}:{port}/rest", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sparkfabric_lab.resident")
    p.add_argument("--cluster", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--lab-dir", required=True)
    p.add_argument("--listen", help="also serve the switch's RouterOS REST on this address")
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--user", default="")
    p.add_argument(
        "--no-delay", action="store_true", help="answer at once instead of after the modelled time"
    )
    a = p.parse_args(argv)
    from pytest_sparkfabric.cluster import load_cluster
    from sparkfabric_sim.model import SimCluster

    sim = WallSim(SimCluster.from_cluster(load_cluster(a.cluster)))
    lab_json = Path(a.lab_dir).resolve() / STATE_FILE
    path = Path(a.socket).resolve()
    if a.listen:
        _serve_rest(sim, a.listen, a.port, a.user)
    server = _bind(path, sim, delay=not a.no_delay)
    stop = threading.Event()

    def end(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, end)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"resident simulator on {path}", flush=True)
    while not stop.wait(WATCH_S):
        if not lab_json.exists():
            print(f"{lab_json} is gone: the lab was removed; ending", flush=True)
            break
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
