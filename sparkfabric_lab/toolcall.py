"""One simulated tool call on a lab node, answered by the lab's resident simulator.

    python -S .../sparkfabric_lab/toolcall.py SOCKET NODE -- TOOL ARGS...

Started by the node's tool wrapper under the real supervisor (lab/supervise.py), as a script
(no runpy). It imports only modules written in C or loaded at start-up: a call costs a bare
Python start, not the simulator's imports (json, socket and signal would import re, enum and
selectors). It prints what the resident sends as it arrives (a server's banner first) and exits
with the tool's status; killed, it hangs up, and the resident ends the command there.

The wire (lab/resident.py): the call is `LENGTH\\n` and NODE, TOOL, ARGS... joined by NUL; the
answer is frames `KIND LENGTH\\n PAYLOAD` with KIND `o` (stdout), `e` (stderr) or `r` (exit
status, the last frame).
"""

from __future__ import annotations

import _socket
import os
import sys


def request(node: str, words: list[str]) -> bytes:
    body = "\0".join([node, *words]).encode("utf-8", "surrogateescape")
    return b"%d\n" % len(body) + body


def frame(kind: bytes, payload: bytes) -> bytes:
    return kind + b"%d\n" % len(payload) + payload


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def answer(sock: _socket.socket) -> int | None:
    """Print the frames as they come; the exit status, or None when the resident hung up."""
    buf = b""
    while True:
        head = buf.find(b"\n")
        if head > 0 and len(buf) > head + int(buf[1:head]):
            kind, end = buf[:1], head + 1 + int(buf[1:head])
            payload, buf = buf[head + 1 : end], buf[end:]
            if kind == b"r":
                return int(payload)
            _write(1 if kind == b"o" else 2, payload)
            continue
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        os.write(2, b"usage: python -S toolcall.py SOCKET NODE -- TOOL ARGS...\n")
        return 2
    path, node, words = argv[0], argv[1], argv[3:]
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        # A unix socket path holds at most 107 bytes: connect by name from inside its folder.
        os.chdir(os.path.dirname(path) or ".")
        sock.connect(os.path.basename(path))
    except OSError as err:
        why = f"the lab's resident simulator at {path} does not answer ({err.strerror})"
        fix = "Fix: `sparkfabric lab status` (is the lab up?)"
        _write(2, f"sparkfabric lab: {words[0]}: {why}. {fix}\n".encode())
        return 127
    sock.sendall(request(node, words))
    rc = answer(sock)
    if rc is None:
        why = f"the resident simulator at {path} hung up without an answer"
        _write(
            2,
            f"sparkfabric lab: {words[0]}: {why}. Fix: see resident.log in the lab dir\n".encode(),
        )
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
