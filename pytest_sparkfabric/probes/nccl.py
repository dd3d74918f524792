"""nccl-tests text output (`all_reduce_perf`, `all_gather_perf`) and NCCL_DEBUG=INFO lines: the
table by its header (any generation) or field count, `--tag-output` prefixes dropped, noise
anywhere; no `# Avg bus bandwidth` leaves `avg_busbw_gbytes_s` None: a failure, never zero."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal

from pytest_sparkfabric.probes import ParseError, found_text

_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUM_RE = re.compile(rf"^{_NUM}$")
_INT_RE = re.compile(r"^-?\d{1,20}$")
_NAME_RE = re.compile(r"^[A-Za-z_]\w*$")
_TAG = re.compile(r"^\[\d{1,9},\d{1,9}\]<(?:stdout|stderr)>:")
_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({_NUM})")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,20})\s*(\w+)?")
_RANK = re.compile(
    r"^#\s*Rank\s+(\d{1,9})\s+(?:Group\s+\d{1,9}\s+)?(?:Pid\s+(\d{1,12})\s+)?on\s+(\S+)\s+"
    r"device\s+(\d{1,9})\s+\[([^\]]*)\]"
)
# Lines that show the test started even without a table.
_STARTED = re.compile(r"^#\s*[rn]ccl-tests version\s+\S|^#?\s*nThread\s+\d{1,9}\s+nGpus\s+\d")
_NCCL_VERSION = re.compile(r"NCCL version\s+\S")
_COLLECTIVE = re.compile(r"^#\s*Collective test (?:starting|concluded):\s*(\S+)")
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
_INFO_PREFIX = re.compile(r"^(?P<host>[^\s:]+):(?P<pid>\d{1,12}):\d{1,12}\s+\[\d{1,9}\]\s")
_NET_IB_USING = re.compile(r"NET/IB\s*:\s*Using\s+(?P<rest>.*)$")
_NET_IB_NONE = re.compile(r"NET/IB\s*:\s*No device found")
_NET_SOCKET_USING = re.compile(r"NET/Socket\s*:\s*Using\s+(?P<rest>.*)$")
_IB_DEV = re.compile(r"\[\d{1,9}\]([^\s:\[\]]+):(\d{1,9})/\w+")
_SOCKET_DEV = re.compile(r"\[\d{1,9}\]([^\s:\[\]]+):(\S+?)<\d+>")
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
    pid: int | None
    host: str
    device: int
    bus_id: str


@dataclass(frozen=True, slots=True)
class NcclNetLine:
    """One ``NET/IB`` or ``NET/Socket`` line: ``devices`` NCCL opened (``rocep1s0f1``,
    ``eth0``); ``no_device`` marks ``NET/IB : No device found.``, a silent fall back to TCP."""

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
    collective: str | None = None

    _json_properties: ClassVar[tuple[str, ...]] = ("completed",)

    @property
    def completed(self) -> bool:
        return self.avg_busbw_gbytes_s is not None


def _int(token: str | None) -> int | None:
    return None if token is None or token == "N/A" else int(token)


def _leading(columns: list[str]) -> tuple[str, ...] | None:
    """The leading column roles of a header, or None when it is not a results table header."""
    names = columns[: columns.index("time")] if "time" in columns else []
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
    size, count, root, redop = cells["size"], cells["count"], cells.get("root"), cells.get("redop")
    if not (
        size.isdigit()
        and count.isdigit()
        and _NAME_RE.match(cells["type"])
        and (redop is None or _NAME_RE.match(redop))
        and (root is None or _INT_RE.match(root))
        and all(_NUM_RE.match(timing[i]) for i in (0, 1, 2, 4, 5, 6))
        and all(t == "N/A" or t.isdigit() for t in (timing[3], timing[7]))
    ):
        return None
    # Each half: time (not kept), algbw, busbw, #wrong.
    oop, ip = [(float(t[1]), float(t[2]), _int(t[3])) for t in (timing, timing[4:])]
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
            host, pid, "IB", tuple(d for d, _ in devs), tuple(int(p) for _, p in devs)
        )
    if m := _NET_SOCKET_USING.search(line):
        socks = _SOCKET_DEV.findall(m["rest"])
        return NcclNetLine(
            host, pid, "Socket", tuple(s for s, _ in socks), addresses=tuple(a for _, a in socks)
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
    collective: str | None = None
    started = False
    leading: tuple[str, ...] | None = None
    for raw in text.splitlines():
        line = _TAG.sub("", raw)
        stripped = line.strip()
        if _STARTED.match(stripped):
            started = True
        elif stripped.startswith("#"):
            if m := _AVG.match(stripped):
                avg = float(m.group(1))
            elif m := _OOB.match(stripped):
                oob, oob_ok = int(m.group(1)), m.group(2) == "OK" if m.group(2) else None
            elif m := _RANK.match(stripped):
                rank, pid, host, device, bus_id = m.groups()
                ranks.append(NcclRank(int(rank), _int(pid), host, int(device), bus_id))
            elif m := _COLLECTIVE.match(stripped):
                collective = collective or m.group(1)
            elif _TABLE_HEADER.match(stripped):
                started = True
                leading = _leading(stripped.lstrip("#").split()) or leading
        elif (shape := leading or _BY_COUNT.get(len(stripped.split()))) and (
            row := _table_row(stripped.split(), shape)
        ):
            rows.append(row)
        else:
            if _FAILURE.search(line):
                errors.append(stripped)
            started = started or bool(_NCCL_VERSION.search(line))
            if "NET/" in line and (net := _net_line(line)) is not None:
                transports.append(net)
            elif m := _USING_NETWORK.search(line):
                networks.append(NcclNetworkChoice(*_prefix(line), m.group(1)))
    if not (rows or ranks or transports or networks or started) and avg is None and oob is None:
        raise ParseError(
            "nccl-tests",
            "expected a result table, a '# Avg bus bandwidth' line or an NCCL line (did the "
            "test start?)",
            f"the test said {errors[0]!r}" if errors else found_text(text),
        )
    return NcclTestsRun(
        tuple(rows), avg, oob, oob_ok, tuple(ranks), tuple(transports), tuple(networks), collective
    )
