"""nccl-tests text output (``all_reduce_perf``, ``all_gather_perf``) and NCCL_DEBUG=INFO lines.

The table is read by its column header: the current one (``size count type redop root time
algbw busbw #wrong`` twice), older ones (no ``root``; all_gather without ``redop``; ``error``
instead of ``#wrong``, ``N/A`` when validation is off) and NCCL 1.0's (``bytes N type op ...
res``). Without a header line (an elided paste) a row is read by its number of fields. Lines
may carry Open MPI's ``--tag-output`` prefix (``[1,0]<stdout>:``), which is removed; noise
lines (NCCL INFO/WARN, UCX, X11, mpirun chatter, ``...``) may sit anywhere. A run that ends
without ``# Avg bus bandwidth`` has ``avg_busbw_gbytes_s`` None: callers treat that as a
failure, never as zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal

from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "nccl-tests"

BusbwOp = Literal["all_reduce", "all_gather", "reduce_scatter"]

_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUM_RE = re.compile(rf"^{_NUM}$")
_INT_RE = re.compile(r"^-?\d{1,20}$")
_NAME_RE = re.compile(r"^[A-Za-z_]\w*$")
_TAG = re.compile(r"^\[\d{1,9},\d{1,9}\]<(?:stdout|stderr)>:")
_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({_NUM})")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,20})\s*(\w+)?")
_RANK = re.compile(
    r"^#\s*Rank\s+(\d{1,9})\s+(?:Group\s+(\d{1,9})\s+)?(?:Pid\s+(\d{1,12})\s+)?on\s+(\S+)\s+"
    r"device\s+(\d{1,9})\s+\[([^\]]*)\]\s*(.*?)\s*$"
)
_TESTS_VERSION = re.compile(r"^#\s*[rn]ccl-tests version\s+\S")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\S+)")
_COLLECTIVE = re.compile(r"^#\s*Collective test (?:starting|concluded):\s*(\S+)")
_THREADS = re.compile(r"^#?\s*nThread\s+(\d{1,9})\s+nGpus\s+(\d{1,9})")
_TABLE_HEADER = re.compile(r"^#\s*(?:size|bytes)\s+(?:count|N)\s+type\b")
_FAILURE = re.compile(r"NCCL failure|Test failure|NCCL WARN|Test NCCL failure")
# The columns before the first ``time``: names as printed by each nccl-tests generation.
_LEADING = {"size": "size", "bytes": "size", "count": "count", "N": "count", "type": "type"}
_LEADING |= {"redop": "redop", "op": "redop", "root": "root"}
# Without a header: the field count tells the leading columns (8 timing fields follow).
_BY_COUNT = {
    13: ("size", "count", "type", "redop", "root"),
    12: ("size", "count", "type", "redop"),
    11: ("size", "count", "type"),
}
_INFO_PREFIX = re.compile(r"^(?P<host>[^\s:]+):(?P<pid>\d{1,12}):(?P<tid>\d{1,12})\s+\[\d{1,9}\]\s")
_NET_IB_USING = re.compile(r"NET/IB\s*:\s*Using\s+(?P<rest>.*)$")
_NET_IB_NONE = re.compile(r"NET/IB\s*:\s*No device found")
_NET_SOCKET_USING = re.compile(r"NET/Socket\s*:\s*Using\s+(?P<rest>.*)$")
_IB_DEV = re.compile(r"\[(\d{1,9})\]([^\s:\[\]]+):(\d{1,9})/(\w+)")
_SOCKET_DEV = re.compile(r"\[(\d{1,9})\]([^\s:\[\]]+):(\S+?)<\d+>")
_USING_NETWORK = re.compile(r"\bUsing network\s+(\S.*?)\s*$")


@dataclass(frozen=True, slots=True)
class NcclRow:
    size_bytes: int
    count: int
    type: str
    redop: str | None
    root: int | None
    oop_algbw_gbytes_s: float
    oop_busbw_gbytes_s: float
    oop_wrong: int | None
    ip_algbw_gbytes_s: float
    ip_busbw_gbytes_s: float
    ip_wrong: int | None


@dataclass(frozen=True, slots=True)
class NcclRank:
    rank: int
    group: int | None
    pid: int | None
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
    addresses: tuple[str, ...] = ()
    no_device: bool = False


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
    nccl_version: str | None = None
    collective: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    columns: tuple[str, ...] = ()

    _json_properties: ClassVar[tuple[str, ...]] = ("completed",)

    @property
    def completed(self) -> bool:
        return self.avg_busbw_gbytes_s is not None

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


def _int(token: str | None) -> int | None:
    return None if token is None else int(token)


def _leading(columns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The leading column roles of a header, or None when it is not a results table header."""
    if "time" not in columns:
        return None
    names = columns[: columns.index("time")]
    roles = tuple(_LEADING.get(n, "") for n in names)
    if "" in roles or roles[:3] != ("size", "count", "type") or len(columns) != len(names) + 8:
        return None
    return roles


def _table_row(tokens: list[str], leading: tuple[str, ...]) -> NcclRow | None:
    """A results row laid out as ``leading`` + 2 x (time algbw busbw wrong), or None."""
    if len(tokens) != len(leading) + 8:
        return None
    cells = dict(zip(leading, tokens, strict=False))
    timing = tokens[len(leading) :]
    size, count, root = cells.get("size", ""), cells.get("count", ""), cells.get("root")
    redop = cells.get("redop")
    checks = (
        size.isdigit(),
        count.isdigit(),
        bool(_NAME_RE.match(cells.get("type", ""))),
        redop is None or bool(_NAME_RE.match(redop)),
        root is None or bool(_INT_RE.match(root)),
        all(_NUM_RE.match(timing[i]) for i in (0, 1, 2, 4, 5, 6)),
        all(t == "N/A" or t.isdigit() for t in (timing[3], timing[7])),
    )
    if not all(checks):
        return None
    # Each half: time (not kept), algbw, busbw, #wrong.
    oop, ip = [(float(t[1]), float(t[2]), _wrong(t[3])) for t in (timing, timing[4:])]
    return NcclRow(int(size), int(count), cells["type"], redop, _int(root), *oop, *ip)


def _prefix(line: str) -> tuple[str | None, int | None]:
    m = _INFO_PREFIX.match(line)
    return (m.group("host"), int(m.group("pid"))) if m else (None, None)


def _net_line(line: str) -> NcclNetLine | None:
    host, pid = _prefix(line)
    if _NET_IB_NONE.search(line):
        return NcclNetLine(host, pid, "IB", (), no_device=True)
    if m := _NET_IB_USING.search(line):
        devs = _IB_DEV.findall(m["rest"])
        return NcclNetLine(
            host, pid, "IB", tuple(d[1] for d in devs), tuple(int(d[2]) for d in devs)
        )
    if m := _NET_SOCKET_USING.search(line):
        socks = _SOCKET_DEV.findall(m["rest"])
        return NcclNetLine(
            host, pid, "Socket", tuple(s[1] for s in socks), addresses=tuple(s[2] for s in socks)
        )
    return None


def parse_nccl_tests(text: str) -> NcclTestsRun:
    rows: list[NcclRow] = []
    ranks: list[NcclRank] = []
    transports: list[NcclNetLine] = []
    networks: list[NcclNetworkChoice] = []
    errors: list[str] = []
    avg: float | None = None
    oob: int | None = None
    oob_ok: bool | None = None
    tests_version = False
    nccl_version: str | None = None
    collective: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    header_seen = False
    columns: tuple[str, ...] = ()
    leading: tuple[str, ...] | None = None
    for raw in text.splitlines():
        line = _TAG.sub("", raw)
        stripped = line.strip()
        if m := _THREADS.match(stripped):
            n_threads, n_gpus = int(m.group(1)), int(m.group(2))
            header_seen = True
            continue
        if stripped.startswith("#"):
            if m := _AVG.match(stripped):
                avg = float(m.group(1))
            elif m := _OOB.match(stripped):
                oob = int(m.group(1))
                oob_ok = m.group(2) == "OK" if m.group(2) else None
            elif m := _RANK.match(stripped):
                rank, group, pid, host, device, bus_id, name = m.groups()
                ranks.append(
                    NcclRank(int(rank), _int(group), _int(pid), host, int(device), bus_id, name)
                )
            elif _TESTS_VERSION.match(stripped):
                tests_version = True
            elif m := _COLLECTIVE.match(stripped):
                collective = collective or m.group(1)
            elif _TABLE_HEADER.match(stripped):
                header_seen = True
                found = tuple(stripped.lstrip("#").split())
                if (roles := _leading(found)) is not None:
                    columns, leading = found, roles
            continue
        tokens = stripped.split()
        shape = leading if leading is not None else _BY_COUNT.get(len(tokens))
        if shape is not None and (row := _table_row(tokens, shape)) is not None:
            rows.append(row)
            continue
        if _FAILURE.search(line):
            errors.append(stripped)
        if nccl_version is None and (m := _NCCL_VERSION.search(line)):
            nccl_version = m.group(1)
        if "NET/" in line and (net := _net_line(line)) is not None:
            transports.append(net)
        elif m := _USING_NETWORK.search(line):
            host, pid = _prefix(line)
            networks.append(NcclNetworkChoice(host=host, pid=pid, network=m.group(1)))
    found_any = bool(rows or ranks or transports or networks or header_seen or tests_version)
    if not found_any and avg is None and oob is None and nccl_version is None:
        raise ParseError(
            TOOL,
            "expected a result table, a '# Avg bus bandwidth' line or an NCCL line (did the "
            "test start?)",
            f"the test said {errors[0]!r}" if errors else found_text(text),
        )
    return NcclTestsRun(
        rows=tuple(rows),
        avg_busbw_gbytes_s=avg,
        out_of_bounds=oob,
        out_of_bounds_ok=oob_ok,
        ranks=tuple(ranks),
        transports=tuple(transports),
        networks=tuple(networks),
        nccl_version=nccl_version,
        collective=collective,
        n_threads=n_threads,
        n_gpus=n_gpus,
        columns=columns,
    )
