"""Ending background processes: what stopping a server, a stream or the GPU load changes."""

from __future__ import annotations

from sparkfabric_sim.state import Process, Runtime


def end_process(rt: Runtime, proc: Process, t: float) -> None:
    """End `proc` at time t (if it is still running then): load, flows and listeners stop."""
    if proc.finished or t >= proc.end:
        proc.finished = True
        return
    proc.end = t
    proc.finished = True
    if proc.kind == "gpu":
        index = proc.detail.get("load")
        if isinstance(index, int):
            rt.loads[proc.node][index][1] = t
    for flow in rt.flows:
        if flow.request.key == proc.detail.get("flow") and flow.end > t:
            flow.end = t
