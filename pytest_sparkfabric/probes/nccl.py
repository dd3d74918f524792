"""nccl-tests text output (``all_reduce_perf``, ``all_gather_perf``) and NCCL_DEBUG=INFO lines.

Handles the current table (``size count type redop root time algbw busbw #wrong`` twice) and
the old one (no ``root`` column, ``error`` instead of ``#wrong``, ``N/A`` when validation is
off). Noise lines (NCCL INFO/WARN, mpirun chatter, ``...............``) may sit anywhere.
A run that ends without ``# Avg bus bandwidth`` has ``avg_busbw_gbytes_s`` None: callers treat
that as a failure, never as zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from pytest_sparkfabric.probes import ParseError

TOOL = "nccl-tests"

BusbwOp = Literal["all_reduce", "all_gather", "reduce_scatter"]

_INT = r"-?\d{1,20}"
_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_WRONG = r"(?:\d{1,20}|N/A)"
_ROW = re.compile(
    rf"^\s*(?P<size>\d{{1,20}})\s+(?P<count>\d{{1,20}})\s+(?P<type>[A-Za-z_][\w]*)\s+"
    rf"(?P<redop>[A-Za-z_][\w]*)\s+(?:(?P<root>{_INT})\s+)?"
    rf"(?P<ot>{_NUM})\s+(?P<oa>{_NUM})\s+(?P<ob>{_NUM})\s+(?P<ow>{_WRONG})\s+"
    rf"(?P<it>{_NUM})\s+(?P<ia>{_NUM})\s+(?P<ib>{_NUM})\s+(?P<iw>{_WRONG})\s*$"
)
_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({_NUM})")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,20})\s*(\w+)?")
_RANK = re.compile(
    r"^#\s*Rank\s+(\d{1,9})\s+(?:Group\s+(\d{1,9})\s+)?Pid\s+(\d{1,12})\s+on\s+(\S+)\s+"
    r"device\s+(\d{1,9})\s+\[([^\]]*)\]\s*(.*?)\s*$"
)
_TESTS_VERSION = re.compile(r"^#\s*nccl-tests version\s+(\S+)(?:.*nccl-library=(\S+))?")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\S+)")
_COLLECTIVE = re.compile(r"^#\s*Collective test (?:starting|concluded):\s*(\S+)")
_THREADS = re.compile(r"^#\s*nThread\s+(\d{1,9})\s+nGpus\s+(\d{1,9})")
_TABLE_HEADER = re.compile(r"^#\s*size\s+count\s+type\s+redop")
_INFO_PREFIX = re.compile(r"^(?P<host>[^\s:]+):(?P<pid>\d{1,12}):(?P<tid>\d{1,12})\s+\[\d{1,9}\]\s")
_NET_IB_USING = re.compile(r"NET/IB\s*:\s*Using\s+(?P<rest>.*)$")
_NET_IB_NONE = re.compile(r"NET/IB\s*:\s*No device found")
_NET_SOCKET_USING = re.compile(r"NET/Socket\s*:\s*Using\s+(?P<rest>.*)$")
_IB_DEV = re.compile(r"\[(\d{1,9})\]([^\s:\[\]]+):(\d{1,9})/(\w+)")
_SOCKET_DEV = re.compile(r"\[(\d{1,9})\]([^\s:\[\]]+):(\S+?)<\d+>")
_USING_NETWORK = re.compile(r"\bUsing network\s+(\S+)")


@dataclass(frozen=True, slots=True)
class NcclRow:
    size_bytes: int
    count: int
    type: str
    redop: str
    root: int | None
    oop_time_us: float
    oop_algbw_gbytes_s: float
    oop_busbw_gbytes_s: float
    oop_wrong: int | None
    ip_time_us: float
    ip_algbw_gbytes_s: float
    ip_busbw_gbytes_s: float
    ip_wrong: int | None


@dataclass(frozen=True, slots=True)
class NcclRank:
    rank: int
    group: int | None
    pid: int
    host: str
    device: int
    bus_id: str
    name: str


@dataclass(frozen=True, slots=True)
class NcclNetLine:
    """One ``NET/IB`` or ``NET/Socket`` line of NCCL_DEBUG=INFO.

    ``devices`` are the names NCCL opened (``rocep1s0f1``, ``eth0``); ``no_device`` marks
    ``NET/IB : No device found.``, the first line of a silent fall back to TCP.
    """

    host: str | None
    pid: int | None
    net: Literal["IB", "Socket"]
    devices: tuple[str, ...]
    ports: tuple[int, ...] = ()
    link_layers: tuple[str, ...] = ()
    addresses: tuple[str, ...] = ()
    no_device: bool = False
    relaxed_ordering: bool = False


@dataclass(frozen=True, slots=True)
class NcclNetworkChoice:
    """``Using network X`` (IB, Socket, or a plugin such as IBext_v8) as printed per process."""

    host: str | None
    pid: int | None
    network: str


@dataclass(frozen=True, slots=True)
class NcclTestsRun:
    rows: tuple[NcclRow, ...]
    avg_busbw_gbytes_s: float | None
    out_of_bounds: int | None
    out_of_bounds_ok: bool | None
    ranks: tuple[NcclRank, ...]
    transports: tuple[NcclNetLine, ...]
    networks: tuple[NcclNetworkChoice, ...]
    nccl_tests_version: str | None = None
    nccl_version: str | None = None
    nccl_library_version: str | None = None
    collective: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None

    _json_properties: ClassVar[tuple[str, ...]] = ("max_busbw_gbytes_s", "completed")

    @property
    def completed(self) -> bool:
        return self.avg_busbw_gbytes_s is not None

    @property
    def max_busbw_gbytes_s(self) -> float | None:
        values = [max(r.oop_busbw_gbytes_s, r.ip_busbw_gbytes_s) for r in self.rows]
        return max(values) if values else None

    @property
    def last_row(self) -> NcclRow | None:
        return self.rows[-1] if self.rows else None

    def networks_by_host(self) -> Mapping[str | None, frozenset[str]]:
        out: dict[str | None, set[str]] = {}
        for choice in self.networks:
            out.setdefault(choice.host, set()).add(choice.network)
        return {host: frozenset(nets) for host, nets in out.items()}

    def ib_devices(self) -> frozenset[str]:
        return frozenset(d for t in self.transports if t.net == "IB" for d in t.devices)


def busbw_from_algbw(algbw: float, ranks: int, op: BusbwOp) -> float:
    """nccl-tests' bus bandwidth: all_reduce x 2(n-1)/n; all_gather, reduce_scatter x (n-1)/n."""
    if isinstance(ranks, bool) or ranks < 1:
        raise ValueError(f"ranks must be >= 1, got {ranks!r}")
    factor = (ranks - 1) / ranks
    return algbw * (2 * factor if op == "all_reduce" else factor)


def _wrong(token: str) -> int | None:
    return None if token == "N/A" else int(token)


def _prefix(line: str) -> tuple[str | None, int | None]:
    m = _INFO_PREFIX.match(line)
    return (m.group("host"), int(m.group("pid"))) if m else (None, None)


def _net_line(line: str) -> NcclNetLine | None:
    host, pid = _prefix(line)
    if _NET_IB_NONE.search(line):
        return NcclNetLine(host=host, pid=pid, net="IB", devices=(), no_device=True)
    m = _NET_IB_USING.search(line)
    if m:
        devs = _IB_DEV.findall(m.group("rest"))
        return NcclNetLine(
            host=host,
            pid=pid,
            net="IB",
            devices=tuple(d[1] for d in devs),
            ports=tuple(int(d[2]) for d in devs),
            link_layers=tuple(d[3] for d in devs),
            relaxed_ordering="[RO]" in m.group("rest"),
        )
    m = _NET_SOCKET_USING.search(line)
    if m:
        socks = _SOCKET_DEV.findall(m.group("rest"))
        return NcclNetLine(
            host=host,
            pid=pid,
            net="Socket",
            devices=tuple(s[1] for s in socks),
            addresses=tuple(s[2] for s in socks),
        )
    return None


def _row(m: re.Match[str]) -> NcclRow:
    root = m.group("root")
    return NcclRow(
        size_bytes=int(m.group("size")),
        count=int(m.group("count")),
        type=m.group("type"),
        redop=m.group("redop"),
        root=int(root) if root is not None else None,
        oop_time_us=float(m.group("ot")),
        oop_algbw_gbytes_s=float(m.group("oa")),
        oop_busbw_gbytes_s=float(m.group("ob")),
        oop_wrong=_wrong(m.group("ow")),
        ip_time_us=float(m.group("it")),
        ip_algbw_gbytes_s=float(m.group("ia")),
        ip_busbw_gbytes_s=float(m.group("ib")),
        ip_wrong=_wrong(m.group("iw")),
    )


def parse_nccl_tests(text: str) -> NcclTestsRun:
    rows: list[NcclRow] = []
    ranks: list[NcclRank] = []
    transports: list[NcclNetLine] = []
    networks: list[NcclNetworkChoice] = []
    avg: float | None = None
    oob: int | None = None
    oob_ok: bool | None = None
    tests_version: str | None = None
    nccl_version: str | None = None
    library: str | None = None
    collective: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    header_seen = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            if m := _AVG.match(stripped):
                avg = float(m.group(1))
            elif m := _OOB.match(stripped):
                oob = int(m.group(1))
                oob_ok = m.group(2) == "OK" if m.group(2) else None
            elif m := _RANK.match(stripped):
                ranks.append(
                    NcclRank(
                        rank=int(m.group(1)),
                        group=int(m.group(2)) if m.group(2) else None,
                        pid=int(m.group(3)),
                        host=m.group(4),
                        device=int(m.group(5)),
                        bus_id=m.group(6),
                        name=m.group(7),
                    )
                )
            elif m := _TESTS_VERSION.match(stripped):
                tests_version, library = m.group(1), m.group(2)
            elif m := _COLLECTIVE.match(stripped):
                collective = collective or m.group(1)
            elif m := _THREADS.match(stripped):
                n_threads, n_gpus = int(m.group(1)), int(m.group(2))
                header_seen = True
            elif _TABLE_HEADER.match(stripped):
                header_seen = True
            continue
        if m := _ROW.match(line):
            rows.append(_row(m))
            continue
        if nccl_version is None and (m := _NCCL_VERSION.search(line)):
            nccl_version = m.group(1)
        if "NET/" in line and (net := _net_line(line)) is not None:
            transports.append(net)
        elif m := _USING_NETWORK.search(line):
            host, pid = _prefix(line)
            networks.append(NcclNetworkChoice(host=host, pid=pid, network=m.group(1)))
    found = bool(rows or ranks or transports or networks or header_seen or tests_version)
    if not found and avg is None and oob is None and nccl_version is None:
        raise ParseError(
            TOOL, "no result table, '# Avg bus bandwidth' line or NCCL line (did the test start?)"
        )
    return NcclTestsRun(
        rows=tuple(rows),
        avg_busbw_gbytes_s=avg,
        out_of_bounds=oob,
        out_of_bounds_ok=oob_ok,
        ranks=tuple(ranks),
        transports=tuple(transports),
        networks=tuple(networks),
        nccl_tests_version=tests_version,
        nccl_version=nccl_version,
        nccl_library_version=library,
        collective=collective,
        n_threads=n_threads,
        n_gpus=n_gpus,
    )
