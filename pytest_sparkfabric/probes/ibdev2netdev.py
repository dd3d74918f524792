"""Mellanox ``ibdev2netdev``: which RoCE device and port belongs to which netdev, Up or Down.

Plain form ``rocep1s0f0 port 1 ==> enp1s0f0np0 (Up)``; ``-v`` puts the PCI address first and
the part, board description, firmware and port state before the arrow (``0000:02:00.0 mlx5_0
(MT4115 - MT1523X04353) CX456A - ConnectX-4 QSFP fw 12.23.1020 port 1 (ACTIVE) ==> enp2s0f0
(Up)``): the board description can be long and padded, so a line is read around its fixed
words (``port``, ``==>``), never by column.
"""

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
