"""Hold a simulated perftest server's TCP port open while it runs (lab only).

    python -m pytest_sparkfabric.lab.listen -- SIM-TOOL-ARGV... -- ib_write_bw ARGS...

A real `ib_write_bw` server listens on its TCP port (-p, default 18515) for the client's
handshake, and the plugin waits until `ss` shows that listener before it starts the client. The
simulator answers the client through its state file and opens no socket, so in the lab this
wrapper binds the port in the node's namespace (a real listener, seen by `ss`) for as long as the
simulated server runs, and passes its output and exit status through. Clients run unwrapped.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType

DEFAULT_PORT = 18515
# perftest options that take a value as the next word (the peer is the one positional).
_VALUED = frozenset(
    [
        "-d",
        "--ib-dev",
        "-i",
        "--ib-port",
        "-m",
        "--mtu",
        "-c",
        "--connection",
        "-s",
        "--size",
        "-n",
        "--iters",
        "-t",
        "--tx-depth",
        "-r",
        "--rx-depth",
        "-q",
        "--qp",
        "-D",
        "--duration",
        "-x",
        "--gid-index",
        "-S",
        "--sl",
        "-I",
        "--inline_size",
        "-u",
        "--qp-timeout",
        "-w",
        "--limit_bw",
        "-y",
        "--limit_msgrate",
        "-l",
        "--post_list",
        "-Q",
        "--cq-mod",
        "-T",
        "--tos",
        "-p",
        "--port",
        "-g",
        "--mcg",
        "-M",
        "--source_ip",
        "-J",
        "--dest_ip",
        "-j",
        "--dest_port",
        "-k",
        "--source_port",
        "-L",
        "--flows",
        "-W",
        "--flows_burst",
        "-E",
        "--use_exp",
        "-z",
        "--com_rdma_cm",
    ]
)


def server_port(args: Sequence[str]) -> int | None:
    """The TCP port a perftest command line listens on, or None when it is a client."""
    port = DEFAULT_PORT
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-p", "--port") and i + 1 < len(args):
            port = int(args[i + 1]) if args[i + 1].isdigit() else port
        if word.startswith("--port="):
            value = word.split("=", 1)[1]
            port = int(value) if value.isdigit() else port
        if word in _VALUED:
            i += 2
            continue
        if not word.startswith("-"):
            return None  # a peer address: this is the client
        i += 1
    return port


def main(argv: Sequence[str]) -> int:
    child = list(argv[1:] if argv[:1] == ["--"] else argv)
    if not child:
        print("usage: python -m pytest_sparkfabric.lab.listen -- ARGV...", file=sys.stderr)
        return 2
    tool_args = child[child.index("--") + 2 :] if "--" in child else child[1:]
    port = server_port(tool_args)
    sock = None
    if port is not None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("0.0.0.0", port))
            sock.listen(8)
        except OSError as err:
            print(f"Couldn't listen to port {port}: {err.strerror}", file=sys.stderr)
            return 1
    proc = subprocess.Popen(child)

    def forward(signum: int, _frame: FrameType | None) -> None:
        proc.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    try:
        return proc.wait()
    finally:
        if sock is not None:
            sock.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
