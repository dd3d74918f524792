"""perftest `ib_write_bw` text, as the GB10 playbook and superbench samples show it.

Test-info lines keep perftest's raw tabs (`OFF\t\tDevice`), the result row uses perftest's
REPORT_FMT (`%-7.2lf\t\t   %-7.6lf`), and RoCE address lines carry a GID line each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv6Address

DASHES = "-" * 87
NO_PEAK = " WARNING: BW peak won't be measured in this run.\n"
WAITING = (
    "\n************************************\n"
    "* Waiting for client to connect... *\n"
    "************************************\n"
)
HEADER_GBITS = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
HEADER_MB = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"


@dataclass(frozen=True, slots=True)
class QpEnd:
    qpn: int
    psn: int
    rkey: int
    vaddr: int
    gid: IPv6Address


@dataclass(frozen=True, slots=True)
class BwTest:
    device: str
    qps: int
    server: bool
    mtu: int
    gid_index: int
    local: Sequence[QpEnd]
    remote: Sequence[QpEnd]


def test_info(t: BwTest) -> str:
    lines = [
        DASHES,
        "                    RDMA_Write BW Test",
        f" Dual-port       : OFF\t\tDevice         : {t.device}",
        f" Number of qps   : {t.qps}\t\tTransport type : IB",
        " Connection type : RC\t\tUsing SRQ      : OFF",
        " PCIe relax order: ON",
        " ibv_wr* API     : ON",
    ]
    if not t.server:
        lines.append(" TX depth        : 128")
    lines += [
        " CQ Moderation   : 1",
        f" Mtu             : {t.mtu}[B]",
        " Link type       : Ethernet",
        f" GID index       : {t.gid_index}",
        " Max inline data : 0[B]",
        " rdma_cm QPs\t : OFF",
        " Data ex. method : Ethernet",
        DASHES,
    ]
    return "\n".join(lines) + "\n"


def _gid(address: IPv6Address) -> str:
    return ":".join(f"{b:02d}" for b in address.packed)


def _address(side: str, q: QpEnd) -> str:
    label = " local address:  " if side == "local" else " remote address: "
    psn = f"{q.psn:#x}"
    return (
        f"{label}LID 0000 QPN {q.qpn:#06x} PSN {psn:<8} RKey {q.rkey:#08x} "
        f"VAddr {q.vaddr:#016x}\n GID:            {_gid(q.gid)}\n"
    )


def addresses(t: BwTest) -> str:
    out = "".join(_address("local", q) for q in t.local)
    out += "".join(_address("remote", q) for q in t.remote)
    return out + DASHES + "\n"


# perftest_parameters.h L215/L235: the header's extra column and the row's `\t    %-3.2f`.
CPU_HEAD = "    CPU_Util[%]"


def row(
    size: int,
    iterations: int,
    peak: float,
    average: float,
    msg_rate_mpps: float,
    cpu_pct: float | None = None,
) -> str:
    head = f" {size:<7}    {iterations:<10}       {peak:<7.2f}            {average:<7.2f}"
    cpu = f"\t    {cpu_pct:<3.2f}" if cpu_pct is not None else ""
    return f"{head}\t\t   {msg_rate_mpps:<7.6f}{cpu}\n"


def report(
    t: BwTest,
    *,
    duration_mode: bool,
    gbits: bool,
    size: int,
    iterations: int,
    avg_gbps: float | None,
    peak_gbps: float,
    cpu_pct: float | None = None,
) -> str:
    """Everything one side prints; avg_gbps None means no result row (a wrong GID index);
    cpu_pct adds the CPU_Util column (--cpu_util in duration mode)."""
    text = NO_PEAK if duration_mode else ""
    if t.server:
        text += WAITING
    text += test_info(t) + addresses(t)
    text += (HEADER_GBITS if gbits else HEADER_MB) + (CPU_HEAD if cpu_pct is not None else "")
    text += "\n"
    if avg_gbps is not None:
        factor = 1.0 if gbits else 1e9 / 8 / 2**20
        rate = avg_gbps * 1e9 / 8 / size / 1e6
        text += row(size, iterations, peak_gbps * factor, avg_gbps * factor, rate, cpu_pct)
    return text + DASHES + "\n"


def retry_exceeded(sent: int) -> str:
    """The client's stderr when no ACK ever comes back: RC retries run out (IBV_WC_RETRY_EXC_ERR
    = 12, "transport retry counter exceeded"; syndrome 0x81 as mlx5 reports it). Format:
    perftest_resources.h NOTIFY_COMP_ERROR_SEND and write_bw.c L392."""
    return (
        " Completion with error at client\n"
        " Failed status-transport retry counter exceeded (12): wr_id 0 syndrom 0x81\n"
        f" scnt={sent}, ccnt=0\n"
        " Failed to complete run_iter_bw function successfully\n"
    )


def connect_failed(peer: str, port: int) -> str:
    return f"Couldn't connect to {peer}:{port}\n Unable to init the socket connection\n"


def no_device(name: str) -> str:
    return f" IB device {name} not found\n Unable to find the Infiniband/RoCE device\n"
