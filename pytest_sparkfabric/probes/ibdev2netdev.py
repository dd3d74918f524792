"""Mellanox ``ibdev2netdev``: which RoCE device and port belongs to which netdev, Up or Down."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_sparkfabric.probes import ParseError

_LINE = re.compile(
    r"^\s*(?P<rdma>\S+)\s+port\s+(?P<port>\d{1,3})\s+(?:\(\w+\)\s+)?==>\s+(?P<netdev>\S+)"
    r"\s+\((?P<state>[^)]*)\)"
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
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            state = m.group("state").strip()
            out.append(
                RdmaNetdev(
                    rdma=m.group("rdma"),
                    port=int(m.group("port")),
                    netdev=m.group("netdev"),
                    up=state == "Up",
                    state=state,
                )
            )
    if not out:
        raise ParseError("ibdev2netdev", "no 'DEV port N ==> NETDEV (Up|Down)' line")
    return tuple(out)
