"""Small outputs: ibdev2netdev, nvidia-smi queries, ss listeners, gpu_burn."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

GPU_FIELDS: Mapping[str, str] = {
    "index": "0",
    "name": "NVIDIA GB10",
    "pci.bus_id": "0000000F:01:00.0",
    "memory.total": "[N/A]",
    "memory.used": "[N/A]",
    "pstate": "P0",
    "driver_version": "580.95.05",
}
UNITS: Mapping[str, str] = {
    "temperature.gpu": "",
    "power.draw": " W",
    "clocks.sm": " MHz",
    "clocks.current.sm": " MHz",
    "utilization.gpu": " %",
}


def ibdev2netdev(rows: Sequence[tuple[str, str, bool]]) -> str:
    return "".join(
        f"{rdma} port 1 ==> {netdev} ({'Up' if up else 'Down'})\n" for rdma, netdev, up in rows
    )


def gpu_csv(fields: Sequence[str], values: Mapping[str, str], header: bool, units: bool) -> str:
    out = ""
    if header:
        names = [f"{f} [{UNITS[f].strip()}]" if UNITS.get(f) else f for f in fields]
        out += ", ".join(names) + "\n"
    cells = []
    for f in fields:
        v = values[f]
        cells.append(v + UNITS.get(f, "") if units and not v.startswith("[") else v)
    return out + ", ".join(cells) + "\n"


def ss_listen(port: int, wildcard: str) -> str:
    local = f"{wildcard}:{port}"
    peer = f"{wildcard}:*"
    return f"LISTEN 0      5      {local:>20} {peer:>20}    \n"


GB10_TOTAL_MB = 122_570
GB10_FREE_MB = 119_000
GPU_LIST = "GPU 0: NVIDIA GB10 (UUID: GPU-5c2d9f4e-7b1a-4c3e-9a8f-2b6d1e0c4a73)\n"


def gpu_burn_output(
    seconds: int, percent: int, temp_c: int, used_mb: int | None = None, start_t: float = 0.0
) -> str:
    """What gpu-burn prints for a run of `seconds` that started at virtual time `start_t`.
    listenClients() (wilicc/gpu-burn gpu_burn-drv.cpp) rewrites one progress line with `\r` at
    each child report, its percentage the elapsed whole seconds (time(0)) over the run, and when
    the percentage passes `nextReport` (10 at first, then the percentage plus 10) it ends the
    line with `\n\tSummary at:   ` and date(1)'s line; one report a second is modelled."""
    from sparkfabric_sim.render.iperf3 import EPOCH

    mem = used_mb if used_mb is not None else int(GB10_FREE_MB * percent / 100)
    parts, next_report = [], 10.0
    for s in range(1, max(seconds, 1) + 1):
        pct = min(100.0 * s / max(seconds, 1), 100.0)
        parts.append(
            f"\r{pct:.1f}%  proc'd: {s * 31} (26847 Gflop/s)   errors: 0   temps: {temp_c} C "
        )
        if next_report < pct:
            next_report = pct + 10.0
            date = time.strftime("%a %b %e %H:%M:%S UTC %Y", time.gmtime(EPOCH + start_t + s))
            parts.append(f"\n\tSummary at:   {date}\n\n")
    progress = "".join(parts)
    return (
        f"Using compare file: compare.ptx\nBurning for {seconds} seconds.\n"
        "GPU 0: NVIDIA GB10 (UUID: GPU-5c2d9f4e-7b1a-4c3e-9a8f-2b6d1e0c4a73)\n"
        f"Initialized device 0 with 122570 MB of memory ({mem + 3000} MB available, "
        f"using {mem} MB of it), using FLOATS\n"
        "Results are 268435456 bytes each, thus performing "
        f"{mem * 2**20 // 268435456 - 2} iterations\n"
        f"{progress}\n"
        "Killing processes with SIGTERM (soft kill)\nFreed memory for dev 0\n"
        "Uninitted cublas\ndone\n\nTested 1 GPUs:\n\tGPU 0: OK\n"
    )


def gpu_burn_low_mem(seconds: int, used_mb: int, temp_c: int) -> tuple[str, str]:
    """(stdout, stderr) of a gpu-burn whose memory share is below three matrices: the child
    prints its iteration count (an unsigned underflow), throws "Low mem for result", dies; the
    parent reads EOF, marks the GPU DIED and aborts (wilicc/gpu-burn gpu_burn-drv.cpp,
    initBuffers and listenClients; exit 123)."""
    result_bytes = 268_435_456  # SIZE 8192 floats squared
    iterations = ((used_mb * 2**20 - 2 * result_bytes) % 2**64) // result_bytes
    stdout = (
        f"Using compare file: compare.ptx\nBurning for {seconds} seconds.\n{GPU_LIST}"
        f"Initialized device 0 with {GB10_TOTAL_MB} MB of memory ({GB10_FREE_MB} MB available, "
        f"using {used_mb} MB of it), using FLOATS\n"
        f"Results are {result_bytes} bytes each, thus performing {iterations} iterations\n"
        f"0.0%  proc'd: -1 (0 Gflop/s)   errors: 0  (DIED!)  temps: {temp_c} C \n\n"
        "No clients are alive!  Aborting\n"
    )
    stderr = "terminate called after throwing an instance of 'std::string'\nread[0] error 0\n"
    return stdout, stderr


# rdma-core ibv_devinfo (libibverbs examples/devinfo.c print_hca_cap()), laid out as a GB10 prints
# it (tests/data/ibv_devinfo/: fw 28.45.4028, vendor_part_id 4129, board NVD0000000087).
_IB_MTU_ENUM = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}


def ibv_devinfo_port(
    device: str, firmware: tuple[str, str], guid: str, active: bool, active_mtu: int
) -> str:
    fw, board = firmware
    state = "PORT_ACTIVE (4)" if active else "PORT_DOWN (1)"
    return (
        f"hca_id:\t{device}\n"
        "\ttransport:\t\t\tInfiniBand (0)\n"
        f"\tfw_ver:\t\t\t\t{fw}\n"
        f"\tnode_guid:\t\t\t{guid}\n"
        f"\tsys_image_guid:\t\t\t{guid}\n"
        "\tvendor_id:\t\t\t0x02c9\n"
        "\tvendor_part_id:\t\t\t4129\n"
        "\thw_ver:\t\t\t\t0x0\n"
        f"\tboard_id:\t\t\t{board}\n"
        "\tphys_port_cnt:\t\t\t1\n"
        "\t\tport:\t1\n"
        f"\t\t\tstate:\t\t\t{state}\n"
        "\t\t\tmax_mtu:\t\t4096 (5)\n"
        f"\t\t\tactive_mtu:\t\t{active_mtu} ({_IB_MTU_ENUM[active_mtu]})\n"
        "\t\t\tsm_lid:\t\t\t0\n"
        "\t\t\tport_lid:\t\t0\n"
        "\t\t\tport_lmc:\t\t0x00\n"
        "\t\t\tlink_layer:\t\tEthernet\n"
    )
