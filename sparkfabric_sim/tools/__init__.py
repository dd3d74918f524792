"""The programs a simulated node has, by name (argv[0]'s basename)."""

from __future__ import annotations

from collections.abc import Callable

from sparkfabric_sim.outcome import Outcome
from sparkfabric_sim.world import Ctx

Tool = Callable[[Ctx, list[str]], Outcome]
_REGISTRY: dict[str, Tool] = {}


def _load() -> dict[str, Tool]:
    if not _REGISTRY:
        from sparkfabric_sim.tools import (
            ethtool,
            gpu,
            iperf3,
            iproute,
            kernel,
            lldp,
            mpirun,
            perftest,
            perftest_lat,
            ping,
            qos,
            rdma,
            system,
            wrappers,
        )

        for module in (
            system,
            wrappers,
            iproute,
            ethtool,
            gpu,
            ping,
            perftest,
            perftest_lat,
            iperf3,
            mpirun,
            qos,
            lldp,
            rdma,
            kernel,
        ):
            _REGISTRY.update(module.TOOLS)
    return _REGISTRY


def dispatch(ctx: Ctx, argv: list[str]) -> Outcome:
    name = argv[0].rsplit("/", 1)[-1]
    if argv[0] in ctx.node.hangs or name in ctx.node.hangs:
        return Outcome(124, hang=True)
    tool = _load().get(name)
    if tool is None or name in ctx.node.missing:
        return Outcome(127, "", f"sh: 1: {argv[0]}: not found\n")
    return tool(ctx, argv)


def known(name: str) -> bool:
    return name.rsplit("/", 1)[-1] in _load()
