"""nvidia-smi queries and the GPU load (gpu_burn): the heat source of the soak."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkfabric_sim import noise
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.render import misc
from sparkfabric_sim.state import Process
from sparkfabric_sim.tools.args import ArgError
from sparkfabric_sim.world import Ctx

IDLE_W, LOADED_W = 11.4, 96.0
IDLE_MHZ, LOADED_MHZ = 2405, 2509
DEFAULT_BURN_S = 10


def gpu_values(ctx: Ctx) -> dict[str, str]:
    busy = ctx.rt.gpu_busy(ctx.node.name, ctx.t)
    jitter = noise.rng(ctx.seed, "gpu", ctx.node.name, round(ctx.t, 1))
    power = (LOADED_W if busy else IDLE_W) * jitter.uniform(0.97, 1.03)
    return {
        **misc.GPU_FIELDS,
        "temperature.gpu": f"{round(ctx.rt.gpu_temp(ctx.node.name, ctx.t))}",
        "power.draw": f"{power:.2f}",
        "clocks.sm": str(LOADED_MHZ if busy else IDLE_MHZ),
        "clocks.current.sm": str(LOADED_MHZ if busy else IDLE_MHZ),
        "utilization.gpu": str(jitter.randint(96, 100) if busy else 0),
    }


def nvidia_smi(ctx: Ctx, argv: list[str]) -> Outcome:
    query: list[str] | None = None
    fmt: list[str] = []
    for arg in argv[1:]:
        if arg.startswith("--query-gpu="):
            query = [f.strip() for f in arg.split("=", 1)[1].split(",") if f.strip()]
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1].split(",")
    if query is None or "csv" not in fmt:
        return fail(
            2, "", 'Invalid combination of input arguments. Please run "nvidia-smi -h" for help.\n'
        )
    values = gpu_values(ctx)
    for field in query:
        if field not in values:
            return Outcome(2, f'Field "{field}" is not a valid field to query.\n\n')
    return ok(misc.gpu_csv(query, values, "noheader" not in fmt, "nounits" not in fmt))


@dataclass(frozen=True, slots=True)
class BurnArgs:
    seconds: int
    use_bytes: int
    """> 0: bytes; < 0: percent of free memory; 0: gpu-burn's default (90% of free)."""
    list_gpus: bool


BURN_SYNTAX_EXIT = 22  # EINVAL
BURN_ABORT_EXIT = 123  # ENOMEDIUM: no clients alive
DEFAULT_USE_PCT = 90  # USEMEM 0.9
MATRIX_BYTES = 268_435_456  # SIZE 8192, floats
LOW_MEM_INIT_S = 2.0


def decode_usemem(text: str) -> int:
    """gpu-burn's decodeUSEMEM (wilicc/gpu-burn gpu_burn-drv.cpp): `strtoll`, then a lone
    trailing `%` is a percentage (returned negative), nothing after the number is megabytes,
    anything else (or no number) is 0, which the caller reports as a syntax error."""
    m = re.match(r"[ \t\n\v\f\r]*([+-]?\d+)", text)
    if m is None:
        return 0
    number, rest = int(m.group(1)), text[m.end() :]
    if rest.startswith("%"):
        return -number if rest == "%" else 0
    return number * 1024 * 1024 if rest == "" else 0


def parse_burn_args(argv: list[str]) -> BurnArgs:
    """gpu-burn's own argument loop: flags are found by substring anywhere in an argument, each
    option token counts, and the run length is the first token after all of them."""
    args = argv[1:]
    taken = 0
    use_bytes = 0
    list_gpus = False
    i = 0
    while i < len(args):
        arg = args[i]
        if "-l" in arg:
            list_gpus = True
            taken += 1
        elif arg.startswith(("-m", "-i", "-c")) or arg == "-stts":
            value = arg[2:] if len(arg) > 2 and arg != "-stts" else None
            if value is None:
                if i + 1 >= len(args):
                    raise ArgError(f"Syntax error near {arg}")
                i += 1
                value = args[i]
                taken += 1
            taken += 1
            if arg.startswith("-m"):
                use_bytes = decode_usemem(value)
                if use_bytes == 0:
                    raise ArgError("Syntax error near -m")
        elif "-d" in arg or "-tc" in arg or "-h" in arg:
            taken += 1
        i += 1
    seconds = DEFAULT_BURN_S
    if len(args) > taken:
        m = re.match(r"\s*[+-]?\d+", args[taken])
        seconds = int(m.group(0)) if m else 0  # atoi
    return BurnArgs(seconds, use_bytes, list_gpus)


def gpu_burn(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = parse_burn_args(argv)
    except ArgError as exc:
        return fail(BURN_SYNTAX_EXIT, f"{exc}\n")
    if a.list_gpus:
        return ok("ID 0: NVIDIA GB10, 122570MB\n")
    seconds = a.seconds
    free = misc.GB10_FREE_MB * 2**20
    pct = -a.use_bytes if a.use_bytes < 0 else DEFAULT_USE_PCT
    use = a.use_bytes if a.use_bytes > 0 else int(free * pct / 100)
    temp = round(ctx.rt.gpu_temp(ctx.node.name, ctx.t))
    if use < 3 * MATRIX_BYTES:
        out, err = misc.gpu_burn_low_mem(seconds, use // 2**20, temp)
        return Outcome(BURN_ABORT_EXIT, out, err, LOW_MEM_INIT_S, out)
    if ctx.changes():
        loads = ctx.rt.loads[ctx.node.name]
        loads.append([ctx.t, ctx.t + seconds])
        proc = Process(
            ctx.rt.new_pid(),
            ctx.node.name,
            tuple(argv),
            "gpu",
            ctx.t,
            ctx.t + seconds,
            detail={"load": len(loads) - 1},
        )
        ctx.spawned.append(ctx.rt.add(proc))
    temp = round(ctx.rt.gpu_temp(ctx.node.name, ctx.t + seconds))
    text = misc.gpu_burn_output(seconds, pct, temp, use // 2**20, ctx.t)
    return Outcome(0, text, "", float(seconds), text.split("\r100.0%")[0])


TOOLS = {"nvidia-smi": nvidia_smi, "gpu_burn": gpu_burn, "gpu-burn": gpu_burn}
