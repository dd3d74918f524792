"""nccl-tests text output (2.18 layout, as the GB10 all_gather sample) and NCCL INFO lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TESTS_VERSION = "2.18.5"
NCCL_CODE = "22809"
WARMUP_ITERS = 1
ITERS = 20

TABLE_HEAD = (
    "#                                                              out-of-place"
    "                       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
    "     time   algbw   busbw  #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
    "     (us)  (GB/s)  (GB/s)\n"
)


@dataclass(frozen=True, slots=True)
class Rank:
    rank: int
    host: str
    pid: int


@dataclass(frozen=True, slots=True)
class Row:
    size: int
    count: int
    type: str
    redop: str
    oop_us: float
    oop_algbw: float
    oop_busbw: float
    ip_us: float
    ip_algbw: float
    ip_busbw: float


def fmt_time(us: float) -> str:
    if us >= 10000:
        return f"{us:7.0f}"
    if us >= 100:
        return f"{us:7.1f}"
    return f"{us:7.2f}"


def row(r: Row) -> str:
    return (
        f"{r.size:>12}  {r.count:>12}  {r.type:>8}  {r.redop:>6}  {-1:>6}  "
        f"{fmt_time(r.oop_us)}  {r.oop_algbw:>6.2f}  {r.oop_busbw:>6.2f}  {0:>6}  "
        f"{fmt_time(r.ip_us)}  {r.ip_algbw:>6.2f}  {r.ip_busbw:>6.2f}  {0:>6}\n"
    )


def version_code(version: tuple[int, int, int]) -> str:
    # nccl.h NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
    major, minor, patch = version
    return str(
        major * 10000 + minor * 100 + patch
        if (major, minor) >= (2, 9)
        else major * 1000 + minor * 100 + patch
    )


def header(
    binary: str,
    min_bytes: int,
    max_bytes: int,
    factor: int,
    ranks: Sequence[Rank],
    library_code: str = NCCL_CODE,
) -> str:
    lines = [
        f"# nccl-tests version {TESTS_VERSION} nccl-headers={NCCL_CODE} "
        f"nccl-library={library_code}",
        f"# Collective test starting: {binary}",
        f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: {factor}(factor) "
        f"warmup iters: {WARMUP_ITERS} iters: {ITERS} agg iters: 1 validation: 1 graph: 0 "
        "unalign: 0",
        "#",
        "# Using devices",
        *(
            f"#  Rank {r.rank:2d} Group  0 Pid {r.pid:6d} on {r.host:>10} device  0 "
            "[000f:01:00] NVIDIA GB10"
            for r in ranks
        ),
        "#",
    ]
    return "\n".join(lines) + "\n"


def footer(binary: str, avg_busbw: float) -> str:
    return (
        "# Out of bounds values : 0 OK\n"
        f"# Avg bus bandwidth    : {avg_busbw:g}\n"
        "#\n"
        f"# Collective test concluded: {binary}\n"
        "#\n"
    )


def info(host: str, pid: int, tid: int, text: str) -> str:
    return f"{host}:{pid}:{tid} [0] NCCL INFO {text}\n"


def warn(host: str, pid: int, tid: int, text: str) -> str:
    return f"{host}:{pid}:{tid} [0] NCCL WARN {text}\n"


def test_failure(host: str, what: str) -> str:
    return f"{host}: Test NCCL failure common.cu:1279 '{what} / '\n"


MPI_NONZERO = (
    "--------------------------------------------------------------------------\n"
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    "--------------------------------------------------------------------------\n"
)


def mpi_not_found(node: str, program: str) -> str:
    """Open MPI 4.1's text for a rank whose executable its node's PATH does not hold (as the
    open-mpi users list and many READMEs quote it: `Node:` and `Executable:` lines)."""
    return (
        "--------------------------------------------------------------------------\n"
        "mpirun was unable to find the specified executable file, and therefore\n"
        "did not launch the job.  This error was first reported for process\n"
        "rank 0; it may have occurred for other processes as well.\n\n"
        "NOTE: A common cause for this error is misspelling a mpirun command\n"
        "      line parameter option (remember that mpirun interprets the first\n"
        "      unrecognized command line token as the executable).\n\n"
        f"Node:       {node}\n"
        f"Executable: {program}\n"
        "--------------------------------------------------------------------------\n"
    )


def no_libnccl(program: str) -> str:
    # ld.so(8): a needed library on neither the rpath, LD_LIBRARY_PATH nor the ld.so cache.
    return (
        f"{program}: error while loading shared libraries: libnccl.so.2: cannot open shared "
        "object file: No such file or directory\n"
    )


MPI_DAEMON = (
    "--------------------------------------------------------------------------\n"
    "ORTE was unable to reliably start one or more daemons.\n"
    "This usually is caused by:\n"
    "--------------------------------------------------------------------------\n"
)

_RULE = "-" * 74 + "\n"

# orte/orted/orted_submit.c (v4.1.8 L303-333): printed by hand, then exit(1).
MPI_ROOT = (
    _RULE + "mpirun has detected an attempt to run as root.\n\n"
    "Running as root is *strongly* discouraged as any mistake (e.g., in\n"
    "defining TMPDIR) or bug can result in catastrophic damage to the OS\n"
    "file system, leaving your system in an unusable state.\n\n"
    "We strongly suggest that you run mpirun as a non-root user.\n\n"
    "You can override this protection by adding the --allow-run-as-root option\n"
    "to the cmd line or by setting two environment variables in the following way:\n"
    "the variable OMPI_ALLOW_RUN_AS_ROOT=1 to indicate the desire to override this\n"
    "protection, and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 to confirm the choice and\n"
    "add one more layer of certainty that you want to do so.\n"
    "We reiterate our advice against doing so - please proceed at your own risk.\n" + _RULE
)


def oob_not_found(value: str) -> str:
    """orte/mca/oob/tcp/help-oob-tcp.txt [no-included-found] (v4.1.8)."""
    return (
        _RULE + "None of the TCP networks specified to be included for out-of-band communications\n"
        f"could be found:\n\n  Value given: {value}\n\n"
        "Please revise the specification and try again.\n" + _RULE
    )
