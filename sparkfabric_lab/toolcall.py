"""One simulated tool call on a lab node, answered by the lab's resident simulator.

    python -S -m sparkfabric_lab.toolcall SOCKET NODE -- TOOL ARGS...

Started by the node's tool wrapper under the real supervisor (lab/supervise.py). It imports
nothing but the standard library's socket and json: a call costs a Python start, not the
simulator's imports. It prints what the resident sends as it arrives (a server's banner first)
and exits with the tool's status; killed, it hangs up, and the resident ends the command there.
"""

from __future__ import annotations

import json
import os
import socket
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: python -S -m sparkfabric_lab.toolcall SOCKET NODE -- TOOL ARGS...",
              file=sys.stderr)  # fmt: skip
        return 2
    path, node, words = argv[0], argv[1], argv[3:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # A unix socket path holds at most 107 bytes: connect by name from inside its folder.
        os.chdir(os.path.dirname(path) or ".")
        sock.connect(os.path.basename(path))
    except OSError as err:
        print(f"sparkfabric lab: {words[0]}: the lab's resident simulator at {path} does not "
              f"answer ({err.strerror}). Fix: `sparkfabric lab status` (is the lab up?)",
              file=sys.stderr)  # fmt: skip
        return 127
    sock.sendall(json.dumps({"node": node, "argv": words}).encode() + b"\n")
    for line in sock.makefile("rb"):
        msg = json.loads(line)
        sys.stdout.write(msg.get("out", ""))
        sys.stdout.flush()
        sys.stderr.write(msg.get("err", ""))
        if "rc" in msg:
            return int(msg["rc"])
    print(f"sparkfabric lab: {words[0]}: the resident simulator at {path} hung up without an "
          "answer. Fix: see resident.log in the lab dir", file=sys.stderr)  # fmt: skip
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
