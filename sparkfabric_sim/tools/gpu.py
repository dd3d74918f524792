"""nvidia-smi queries and the GPU load (gpu_burn): the heat source of the soak."""

from __future__ import annotations

import functools

from sparkfabric_sim import noise
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.render import misc
from sparkfabric_sim.state import Process
from sparkfabric_sim.tools.args import ArgError, Parser
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


@functools.cache  # built once: parse_args leaves a parser unchanged
def _burn_parser() -> Parser:
    p = Parser("gpu_burn")
    p.add_argument("-m", dest="memory", default="90%")
    p.add_argument("-d", action="store_true")
    p.add_argument("-tc", action="store_true")
    p.add_argument("-i", dest="index", default="0")
    p.add_argument("-c", dest="compare")
    p.add_argument("-l", action="store_true")
    p.add_argument("seconds", nargs="?", default=str(DEFAULT_BURN_S))
    return p


def gpu_burn(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _burn_parser().parse_args(argv[1:])
        seconds = int(a.seconds)
        percent = int(str(a.memory).rstrip("%"))
    except (ArgError, ValueError):
        return fail(1, "Syntax error\n")
    if a.l:
        return ok("ID 0: NVIDIA GB10, 122570MB\n")
    if not ctx.dry_run:
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
    text = misc.gpu_burn_output(seconds, percent, temp)
    return Outcome(0, text, "", float(seconds), text.split("100.0%")[0])


TOOLS = {"nvidia-smi": nvidia_smi, "gpu_burn": gpu_burn, "gpu-burn": gpu_burn}
