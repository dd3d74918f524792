"""perftest ``ib_write_bw`` and ``ib_write_lat``: command lines and the text reports.

Units: with ``--report_gbits`` perftest prints Gb/sec (10^9 bit/s). Without it, it prints
MB/sec where a MB is 2^20 bytes: linux-rdma/perftest src/perftest_resources.c,
``print_report_bw``: ``format_factor = (user_param->report_fmt == MBS) ? 0x100000 : 125000000``.
The MsgRate column confirms it: 0.003007 Mpps x 8388608 B x 8 = 201.8 Gb/s = 24056.72 MB/sec
x 2^20 x 8. So MB/sec converts to Gb/s as ``x * 2**20 * 8 / 1e9``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import ClassVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text, positive

TOOL = "ib_write_bw"
MB_PER_S_TO_GBPS = 2**20 * 8 / 1e9

# perftest_parameters.h: RESULT_LINE / RESULT_FMT (+ RESULT_FMT_CPU_UTIL with --cpu_util). The
# table is read by its header, so an extra column (CPU_Util[%]) or a missing one is taken as it
# comes; rows are split on whitespace because duration mode squeezes the columns together
# (`4096       8758300          0.00 11403.46                   2.919285`).
_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb|MB)/sec\]")
_COLUMN = re.compile(r"#bytes|#iterations|BW peak\[[^\]]*\]|BW average\[[^\]]*\]|\S+")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_TITLE = re.compile(r"^\s*(\S+(?:\s+Bidirectional)?)\s+BW Test\s*$")
_DEVICE = re.compile(r"\bDevice\s*:\s*(\S+)")
_QPS = re.compile(r"\bNumber of qps\s*:\s*(\d{1,9})")
_LINK = re.compile(r"\bLink type\s*:\s*(\S+)")
_GID = re.compile(r"\bGID index\s*:\s*(\d{1,9})")
_MTU = re.compile(r"\bMtu\s*:\s*(\d{1,9})\s*\[B\]")
_RDMA_CM = re.compile(r"\brdma_cm QPs\s*:\s*(ON|OFF)")
# Lines perftest prints when it gives up; kept so a failure can quote the tool.
_ERROR = re.compile(
    r"(Couldn't|Unable to|Failed to|Completion with error|Problem in|error:|ERROR|not found)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class BwRow:
    size_bytes: int
    iterations: int
    bw_peak_gbps: float
    bw_avg_gbps: float
    msg_rate_mpps: float
    cpu_util_pct: float | None = None


@dataclass(frozen=True, slots=True)
class IbWriteBw:
    """One or more perftest bandwidth reports (ib_write_bw, ib_send_bw, ib_read_bw);
    ``columns`` are the table's column names as printed (the last header seen)."""

    device: str | None
    qps: int | None
    link_type: str | None
    gid_index: int | None
    rows: tuple[BwRow, ...]
    mtu_bytes: int | None = None
    rdma_cm: bool | None = None
    test: str | None = None
    columns: tuple[str, ...] = ()

    _json_properties: ClassVar[tuple[str, ...]] = (
        "bw_avg_gbps",
        "largest_size_bytes",
        "run_infinitely",
    )

    @property
    def largest_size_bytes(self) -> int:
        return max(r.size_bytes for r in self.rows)

    @property
    def run_infinitely(self) -> bool:
        """Rows of one size repeated with the peak column 0.00: ``--run_infinitely`` samples."""
        top = [r for r in self.rows if r.size_bytes == self.largest_size_bytes]
        return len(top) > 1 and all(r.bw_peak_gbps == 0.0 for r in top)

    @property
    def bw_avg_gbps(self) -> float:
        """Average bandwidth at the largest message size, in Gb/s.

        ``--run_infinitely`` prints one row per interval: their mean. Otherwise a row printed
        again verbatim is the other process of an interleaved server+client log, so identical
        rows count once (the 8 MiB loopback log prints 23240.68 MB/sec twice).
        """
        top = [r for r in self.rows if r.size_bytes == self.largest_size_bytes]
        if not self.run_infinitely:
            top = list(dict.fromkeys(top))
        return sum(r.bw_avg_gbps for r in top) / len(top)


def _base_command(
    device: str, *, qps: int, duration_s: int, port: int, gid_index: int | None
) -> list[str]:
    parts = ["ib_write_bw", "-d", device, "-F", "--report_gbits", "-q", positive("qps", qps)]
    parts += ["-D", positive("duration_s", duration_s), "-p", positive("port", port)]
    if gid_index is not None:
        parts += ["-x", positive("gid_index", gid_index, least=0)]
    return parts


def build_ib_write_bw_server(
    device: str, *, qps: int, duration_s: int, port: int, gid_index: int | None = None
) -> shell.Command:
    """The server side: the same command as the client without the peer address."""
    return shell.join(
        _base_command(device, qps=qps, duration_s=duration_s, port=port, gid_index=gid_index)
    )


def build_ib_write_bw_client(
    device: str,
    peer: IPv4Address,
    *,
    qps: int,
    duration_s: int,
    port: int,
    gid_index: int | None = None,
) -> shell.Command:
    parts = _base_command(device, qps=qps, duration_s=duration_s, port=port, gid_index=gid_index)
    return shell.join([*parts, str(IPv4Address(peer))])


def _first_int(pattern: re.Pattern[str], text: str) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def _columns(line: str) -> tuple[str, ...]:
    return tuple(_COLUMN.findall(line[line.index("#bytes") :]))


def _row(tokens: list[str], columns: tuple[str, ...], factor: float) -> BwRow | None:
    """One result row read by its header; None when the line is not a row of that table."""
    if len(tokens) != len(columns) or not all(_NUMBER.match(t) for t in tokens):
        return None
    cells = dict(zip(columns, tokens, strict=True))
    size, iterations = cells.get("#bytes", ""), cells.get("#iterations", "")
    if not size.isdigit() or not iterations.isdigit():
        return None
    by_prefix = {name.split("[", 1)[0]: value for name, value in cells.items()}
    if not {"BW peak", "BW average", "MsgRate"} <= set(by_prefix):
        return None
    cpu = by_prefix.get("CPU_Util")
    return BwRow(
        size_bytes=int(size),
        iterations=int(iterations),
        bw_peak_gbps=float(by_prefix["BW peak"]) * factor,
        bw_avg_gbps=float(by_prefix["BW average"]) * factor,
        msg_rate_mpps=float(by_prefix["MsgRate"]),
        cpu_util_pct=float(cpu) if cpu is not None else None,
    )


def parse_ib_write_bw(text: str) -> IbWriteBw:
    """Parse the text report of one or more perftest BW processes (client, server, both).

    Rows count only after a table header, whose columns and unit they take. No row at all
    raises ParseError naming what the tool said instead.
    """
    rows: list[BwRow] = []
    columns: tuple[str, ...] = ()
    factor = 1.0
    seen_header = False
    test: str | None = None
    for line in text.splitlines():
        header = _HEADER.search(line)
        if header:
            factor = 1.0 if header.group(1) == "Gb" else MB_PER_S_TO_GBPS
            seen_header = True
            columns = _columns(line)
            continue
        if test is None and (title := _TITLE.match(line)):
            test = " ".join(title.group(1).split())
        if columns and (row := _row(line.split(), columns, factor)) is not None:
            rows.append(row)
    if not rows:
        errors = [line.strip() for line in text.splitlines() if _ERROR.search(line)]
        what = (
            "expected a result row under the '#bytes #iterations BW peak' header, and there is "
            "none (a run that could not exchange data stops after the header)"
        )
        if not seen_header:
            what = "no result table (no '#bytes #iterations BW peak' header and no row)"
        said = f"the tool said {errors[0]!r}" if errors else found_text(text, last=True)
        raise ParseError(TOOL, what, said)
    device = _DEVICE.search(text)
    link = _LINK.search(text)
    rdma_cm = _RDMA_CM.search(text)
    return IbWriteBw(
        device=device.group(1) if device else None,
        qps=_first_int(_QPS, text),
        link_type=link.group(1) if link else None,
        gid_index=_first_int(_GID, text),
        rows=tuple(rows),
        mtu_bytes=_first_int(_MTU, text),
        rdma_cm=(rdma_cm.group(1) == "ON") if rdma_cm else None,
        test=test,
        columns=columns,
    )


# ---------------------------------------------------------------- ib_write_lat
# One RDMA write ping-pong; server `ib_write_lat -d DEV -F -p PORT`, client the same plus the
# server's address. One row under `#bytes #iterations t_min[usec] t_max[usec] t_typical[usec]
# t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]` (the GB10 sample in
# tests/data/ib_write_lat/; older perftest prints no t_avg and later columns, then t_typical
# stands for it). As with ib_write_bw, a run that moves nothing prints the header and no row:
# a failure, never a zero.

_HEAD = re.compile(r"^\s*#bytes\s+#iterations\s+t_min\[usec\]", re.M)
_NUM = r"(\d+(?:\.\d+)?)"
_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+{_NUM}\s+{_NUM}\s+{_NUM}(?:\s+{_NUM})?")


@dataclass(frozen=True, slots=True)
class IbWriteLat:
    size_bytes: int
    iterations: int
    t_typical_us: float
    t_avg_us: float


def _command(device: str, port: int) -> list[str]:
    return ["ib_write_lat", "-d", device, "-F", "-p", positive("port", port)]


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
            size, iters, _, _, typical, avg = m.groups()
            return IbWriteLat(int(size), int(iters), float(typical), float(avg or typical))
    raise ParseError(
        "ib_write_lat",
        "the table has no result row (a wrong GID index or a path that drops RoCE prints the "
        "header only)",
        found_text(text, last=True),
    )
