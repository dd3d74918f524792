"""Mellanox `ibdev2netdev` (plain, or `-v` with PCI address, part, board and firmware before the
arrow): which RoCE device and port is which netdev, Up or Down. Lines are read around their fixed
words (`port`, `==>`), never by column: `-v`'s board description is long and padded."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_sparkfabric.probes import ParseError, found_text

_LINE = re.compile(
    r"^\s*(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d\s+(?P<v>\S+)\s+\([^)]*\)\s*.*?\bfw"
    r"\s+\S+\s+|(?P<rdma>\S+)\s+)port\s+(?P<port>\d{1,3})\s+(?:\([^)]*\)\s+)?==>\s+"
    r"(?P<netdev>\S+)\s+\((?P<state>[^)]*)\)"
)


@dataclass(frozen=True, slots=True)
class RdmaNetdev:
    rdma: str
    port: int
    netdev: str
    up: bool
    state: str


def parse_ibdev2netdev(text: str) -> tuple[RdmaNetdev, ...]:
    out = []
    for m in filter(None, map(_LINE.match, text.splitlines())):
        state = m["state"].strip()
        out.append(
            RdmaNetdev(m["v"] or m["rdma"], int(m["port"]), m["netdev"], state == "Up", state)
        )
    if not out:
        raise ParseError(
            "ibdev2netdev", "expected 'DEV port N ==> NETDEV (Up|Down)' lines", found_text(text)
        )
    return tuple(out)
