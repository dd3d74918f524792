"""perftest `ib_write_lat`: one RDMA write ping-pong between two RoCE devices, its latency.

Server `ib_write_lat -d DEV -F -p PORT`, client the same plus the server's address. Both print
the perftest header, then one row under `#bytes #iterations t_min[usec] t_max[usec]
t_typical[usec] t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]`
(the GB10 sample in tests/data/ib_write_lat/; older perftest prints no t_avg and
later columns, then t_typical stands for it). As with ib_write_bw, a run that connects but
moves nothing prints the header and no row: that is a failure, never a zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

_HEAD = re.compile(r"^\s*#bytes\s+#iterations\s+t_min\[usec\]", re.M)
_NUM = r"(\d+(?:\.\d+)?)"
_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+{_NUM}\s+{_NUM}\s+{_NUM}(?:\s+{_NUM})?")


@dataclass(frozen=True, slots=True)
class IbWriteLat:
    size_bytes: int
    iterations: int
    t_min_us: float
    t_max_us: float
    t_typical_us: float
    t_avg_us: float


def _command(device: str, port: int) -> list[str]:
    if isinstance(port, bool) or port < 1:
        raise ValueError(f"port must be a positive integer, got {port!r}")
    return ["ib_write_lat", "-d", device, "-F", "-p", str(port)]


def build_ib_write_lat_server(device: str, *, port: int) -> shell.Command:
    return shell.join(_command(device, port))


def build_ib_write_lat_client(device: str, peer: IPv4Address, *, port: int) -> shell.Command:
    return shell.join([*_command(device, port), str(IPv4Address(peer))])


def parse_ib_write_lat(text: str) -> IbWriteLat:
    head = _HEAD.search(text)
    if head is None:
        raise ParseError(
            "ib_write_lat",
            "expected the '#bytes #iterations t_min[usec] ...' table (did the run start?)",
            found_text(text, last=True),
        )
    for line in text[head.end() :].splitlines():
        if m := _ROW.match(line):
            size, iters, t_min, t_max, typical, avg = m.groups()
            return IbWriteLat(
                int(size),
                int(iters),
                float(t_min),
                float(t_max),
                float(typical),
                float(avg or typical),
            )
    raise ParseError(
        "ib_write_lat",
        "the table has no result row (a wrong GID index or a path that drops RoCE prints the "
        "header only)",
        found_text(text, last=True),
    )
