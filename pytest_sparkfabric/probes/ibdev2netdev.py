"""Mellanox ``ibdev2netdev``: which RoCE device and port belongs to which netdev, Up or Down.

Plain form ``rocep1s0f0 port 1 ==> enp1s0f0np0 (Up)``; ``-v`` adds the PCI address, the part
and serial, the board description, the firmware and the port state before the arrow
(``0000:02:00.0 mlx5_0 (MT4115 - MT1523X04353) CX456A - ConnectX-4 QSFP fw 12.23.1020 port 1
(ACTIVE) ==> enp2s0f0 (Up)``). The board description can be long and padded, so a ``-v`` line
is read around its fixed words (``fw``, ``port``, ``==>``), never by column. The port state
(IB ``ACTIVE``/``DOWN``, padded as ``(DOWN  )``) and the netdev state are independent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_sparkfabric.probes import ParseError, found_text

_LINE = re.compile(
    r"^\s*(?P<rdma>\S+)\s+port\s+(?P<port>\d{1,3})\s+(?:\(\w+\)\s+)?==>\s+(?P<netdev>\S+)"
    r"\s+\((?P<state>[^)]*)\)"
)
_VERBOSE = re.compile(
    r"^\s*(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s+(?P<rdma>\S+)\s+"
    r"\((?P<part>[^)]*)\)\s*(?P<board>.*?)\s*\bfw\s+(?P<fw>\S+)\s+port\s+(?P<port>\d{1,3})\s+"
    r"\((?P<port_state>[^)]*)\)\s+==>\s+(?P<netdev>\S+)\s+\((?P<state>[^)]*)\)"
)


@dataclass(frozen=True, slots=True)
class RdmaNetdev:
    rdma: str
    port: int
    netdev: str
    up: bool
    state: str
    pci: str | None = None
    part: str | None = None
    board: str | None = None
    firmware: str | None = None
    port_state: str | None = None


def _row(m: re.Match[str]) -> RdmaNetdev:
    g: dict[str, str] = {k: v.strip() for k, v in m.groupdict().items()}
    verbose = (
        g.get("pci"),
        g.get("part"),
        g.get("board") or None,
        g.get("fw"),
        g.get("port_state"),
    )
    return RdmaNetdev(
        g["rdma"], int(g["port"]), g["netdev"], g["state"] == "Up", g["state"], *verbose
    )


def parse_ibdev2netdev(text: str) -> tuple[RdmaNetdev, ...]:
    out = []
    for line in text.splitlines():
        if m := _VERBOSE.match(line) or _LINE.match(line):
            out.append(_row(m))
    if not out:
        raise ParseError(
            "ibdev2netdev", "expected 'DEV port N ==> NETDEV (Up|Down)' lines", found_text(text)
        )
    return tuple(out)
