"""perftest `ib_write_bw` and `ib_write_lat`: command lines and text reports. Without
`--report_gbits` a MB/sec is 2^20 bytes (perftest_resources.c `print_report_bw`), so Gb/s is
`x * 2**20 * 8 / 1e9`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import ClassVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text, positive

MB_PER_S_TO_GBPS = 2**20 * 8 / 1e9

# perftest_parameters.h RESULT_LINE / RESULT_FMT (+ RESULT_FMT_CPU_UTIL with --cpu_util): rows
# are read by the header's columns, split on whitespace because duration mode squeezes them
# together (`4096       8758300          0.00 11403.46                   2.919285`).
_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb|MB)/sec\]")
_COLUMN = re.compile(r"#bytes|#iterations|BW peak\[[^\]]*\]|BW average\[[^\]]*\]|\S+")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_DEVICE = re.compile(r"\bDevice\s*:\s*(\S+)")
_INTS = {
    "qps": re.compile(r"\bNumber of qps\s*:\s*(\d{1,9})"),
    "gid_index": re.compile(r"\bGID index\s*:\s*(\d{1,9})"),
    "mtu_bytes": re.compile(r"\bMtu\s*:\s*(\d{1,9})\s*\[B\]"),
}
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
    ``columns`` are the last table header's column names as printed."""

    device: str | None
    qps: int | None
    gid_index: int | None
    rows: tuple[BwRow, ...]
    mtu_bytes: int | None = None
    columns: tuple[str, ...] = ()

    _json_properties: ClassVar[tuple[str, ...]] = ("bw_avg_gbps", "run_infinitely")

    def _top(self) -> list[BwRow]:
        largest = max(r.size_bytes for r in self.rows)
        return [r for r in self.rows if r.size_bytes == largest]

    @property
    def run_infinitely(self) -> bool:
        """Rows of one size repeated with the peak column 0.00: ``--run_infinitely`` samples."""
        top = self._top()
        return len(top) > 1 and all(r.bw_peak_gbps == 0.0 for r in top)

    @property
    def bw_avg_gbps(self) -> float:
        """Average bandwidth at the largest message size, in Gb/s: the mean of
        ``--run_infinitely``'s intervals; otherwise a row printed again verbatim is the other
        process of an interleaved server+client log and counts once."""
        top = self._top() if self.run_infinitely else list(dict.fromkeys(self._top()))
        return sum(r.bw_avg_gbps for r in top) / len(top)


def _command(
    tool: str, device: str, port: int, peer: IPv4Address | None, *flags: str
) -> shell.Command:
    argv = [tool, "-d", device, "-F", *flags, "-p", positive("port", port)]
    return shell.join(argv + ([] if peer is None else [str(IPv4Address(peer))]))


def build_ib_write_bw(
    device: str, peer: IPv4Address | None = None, *, qps: int, duration_s: int, port: int
) -> shell.Command:
    """The server's command line without a peer, the client's with one."""
    flags = ("--report_gbits", "-q", positive("qps", qps), "-D", positive("duration_s", duration_s))
    return _command("ib_write_bw", device, port, peer, *flags)


def _row(tokens: list[str], columns: tuple[str, ...], factor: float) -> BwRow | None:
    """One result row read by its header; None when the line is not a row of that table."""
    if len(tokens) != len(columns) or not all(_NUMBER.match(t) for t in tokens):
        return None
    cells = {name.split("[", 1)[0]: value for name, value in zip(columns, tokens, strict=True)}
    size, iterations = cells.get("#bytes", ""), cells.get("#iterations", "")
    need = {"BW peak", "BW average", "MsgRate"}
    if not (size.isdigit() and iterations.isdigit() and need <= set(cells)):
        return None
    peak, avg = (float(cells[k]) * factor for k in ("BW peak", "BW average"))
    cpu = None if (cpu_text := cells.get("CPU_Util")) is None else float(cpu_text)
    return BwRow(int(size), int(iterations), peak, avg, float(cells["MsgRate"]), cpu)


def parse_ib_write_bw(text: str) -> IbWriteBw:
    """The text report of one or more perftest BW processes (client, server, both): rows count
    only after a table header, whose columns and unit they take."""
    rows: list[BwRow] = []
    columns: tuple[str, ...] = ()
    factor = 1.0
    for line in text.splitlines():
        if header := _HEADER.search(line):
            factor = 1.0 if header.group(1) == "Gb" else MB_PER_S_TO_GBPS
            columns = tuple(_COLUMN.findall(line[line.index("#bytes") :]))
        elif columns and (row := _row(line.split(), columns, factor)) is not None:
            rows.append(row)
    if not rows:
        errors = [line.strip() for line in text.splitlines() if _ERROR.search(line)]
        what = (
            "expected a result row under the '#bytes #iterations BW peak' header, and there is "
            "none (a run that could not exchange data stops after the header)"
            if columns
            else "no result table (no '#bytes #iterations BW peak' header and no row)"
        )
        said = f"the tool said {errors[0]!r}" if errors else found_text(text, last=True)
        raise ParseError("ib_write_bw", what, said)
    device = _DEVICE.search(text)
    ints = {k: int(m[1]) if (m := p.search(text)) else None for k, p in _INTS.items()}
    return IbWriteBw(device[1] if device else None, rows=tuple(rows), columns=columns, **ints)


# ib_write_lat: one RDMA write ping-pong. One row under `#bytes #iterations t_min[usec] t_max[usec]
# t_typical[usec] t_avg[usec] ...` (the GB10 sample in tests/data/ib_write_lat/; older perftest
# prints no t_avg, then t_typical stands for it). A run that moves nothing prints the header and
# no row: a failure, never a zero.
_LAT_HEAD = re.compile(r"^\s*#bytes\s+#iterations\s+t_min\[usec\]", re.M)
_NUM = r"(\d+(?:\.\d+)?)"
_LAT_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+{_NUM}\s+{_NUM}\s+{_NUM}(?:\s+{_NUM})?")


@dataclass(frozen=True, slots=True)
class IbWriteLat:
    size_bytes: int
    iterations: int
    t_typical_us: float
    t_avg_us: float


def build_ib_write_lat(device: str, peer: IPv4Address | None = None, *, port: int) -> shell.Command:
    """The server's command line without a peer, the client's with one."""
    return _command("ib_write_lat", device, port, peer)


def parse_ib_write_lat(text: str) -> IbWriteLat:
    head = _LAT_HEAD.search(text)
    for line in text[head.end() :].splitlines() if head else ():
        if m := _LAT_ROW.match(line):
            size, iters, _, _, typical, avg = m.groups()
            return IbWriteLat(int(size), int(iters), float(typical), float(avg or typical))
    what = (
        "the table has no result row (a wrong GID index or a path that drops RoCE prints the "
        "header only)"
        if head
        else "expected the '#bytes #iterations t_min[usec] ...' table (did the run start?)"
    )
    raise ParseError("ib_write_lat", what, found_text(text, last=True))
