"""What the session measured, read from the engine's phase cache into the results document's
`measurements`, `cables`, `phases` and `thresholds` (it starts nothing). A cable's status is the
worst outcome of the checks that record its id in their `cables` property."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pytest_sparkfabric.results import (
    STATUS_OF,
    Cable,
    CableEnd,
    Item,
    Measurement,
    Phase,
    Threshold,
    worst,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric, PhaseName
    from pytest_sparkfabric.measure.links import Links, Modules
    from pytest_sparkfabric.results import Status

T = TypeVar("T")


def _phase(fabric: Fabric, name: PhaseName, kind: type[T]) -> T | None:
    """What phase `name` holds, if it ran. Read without an isinstance check: a test runner that
    imports the suite anew (pytester) may hold the same class twice."""
    return cast("T | None", fabric.measured(name, object))


def _figure(kind: str, value: float, unit: str, objects: list[str], **kw: Any) -> Measurement:
    return Measurement(kind=kind, value=value, unit=unit, objects=tuple(objects), **kw)


def _bandwidth(fabric: Fabric) -> list[Measurement]:
    from pytest_sparkfabric.measure import rdma

    lb = _phase(fabric, rdma.LOOPBACK, rdma.Loopbacks)
    run = _phase(fabric, rdma.NAME, rdma.RdmaRun)
    tr = _phase(fabric, rdma.TCP, rdma.RdmaRun)
    found: list[tuple[str, Iterable[rdma.BwResult]]] = [
        ("loopback_gbps", lb.results.values() if lb else ()),
        ("rdma_gbps", (r for rs in run.links.values() for r in rs) if run else ()),
        ("tcp_gbps", (r for rs in tr.links.values() for r in rs) if tr else ()),
    ]
    out = []
    for kind, results in found:
        for r in results:
            kw = {"node": r.src.node, "peer": None if r.loopback else r.dst.node}
            if r.gbps is not None:
                out.append(_figure(kind, r.gbps, "Gb/s", [r.where], rail=r.link.rail, **kw))
    return out


def _nccl(fabric: Fabric) -> list[Measurement]:
    from pytest_sparkfabric.measure import nccl_run

    run = _phase(fabric, nccl_run.NAME, nccl_run.NcclRun)
    if run is None or run.parsed is None:
        return []
    op = run.parsed.collective or "all_reduce_perf"
    nodes = [n.name for n in fabric.cluster.nodes]
    rows = [(max(r.oop_busbw_gbytes_s, r.ip_busbw_gbytes_s), r.size_bytes) for r in run.parsed.rows]
    return [_figure("nccl_busbw_gbytes_s", v, "GB/s", nodes, size_bytes=n, op=op) for v, n in rows]


def _links(fabric: Fabric) -> tuple[Links | None, Modules | None]:
    """The link and module EEPROM reads, where they ran (nothing is measured at session end)."""
    from pytest_sparkfabric.measure import links

    return _phase(fabric, links.NAME, links.Links), _phase(fabric, links.CABLE, dict)


def _soak(fabric: Fabric) -> list[Measurement]:
    from pytest_sparkfabric.measure import counters, soak

    run = _phase(fabric, soak.NAME, soak.SoakRun)
    if run is None:
        return []
    out: list[Measurement] = []
    eth, mods = _links(fabric)
    for rail in fabric.cluster.rails:
        ws = [w for w in counters.rail_log(fabric).of(rail.id, soak.NAME) if w.error is None]
        if not ws:
            continue
        got, m = eth.ethtool.get(rail.id) if eth else None, (mods or {}).get((rail.node, rail.port))
        e = got.value if got else None
        speed: float | None = e.speed_mbps if e else None
        found: list[soak.LaneFinding] = []
        if eth and mods:
            # Lanes are flagged as the soak test judged them, which read the links first;
            # without that test there is no lane verdict to show.
            found, _, speed = soak.lanes(
                rail, run, ws, fabric.thresholds, e, m.value if m else None
            )
        flagged = {o.lane for o in found}
        at = {"node": rail.node, "rail": rail.index}
        for w in ws:
            t_s = max(0.0, w.end_s - run.started_s)
            for lane, rate in soak.lane_rates(w).items():
                kw = {"lane": lane, "t_s": t_s, "flagged": lane in flagged, **at}
                out.append(_figure("lane_error_rate_per_s", rate, "errors/s", [rail.id], **kw))
        if (ber := soak.max_ber(ws, speed)) is not None:
            out.append(_figure("ber_max", ber, "", [rail.id], **at))
    # The soak keeps each node's peak, not a series: a figure with no time (the picture's
    # tooltips show it; the temperature chart waits for a series).
    for kind, peaks in (("nic_temp_c", run.nic_temp_c), ("gpu_temp_c", run.gpu_temp_c)):
        out += [_figure(kind, value, "C", [node], node=node) for node, value in peaks.items()]
    return out


def measurements(fabric: Fabric) -> list[Measurement]:
    return [*_bandwidth(fabric), *_nccl(fabric), *_soak(fabric)]


# -- cables -------------------------------------------------------------------------------------


def _end(fabric: Fabric, node: str | None, port: int | str | None) -> tuple[CableEnd, list[str]]:
    """One end of a cable as read there, and what its module EEPROM cannot be taken for."""
    from pytest_sparkfabric.measure import links

    end: dict[str, Any] = {"node": node, "port": port if port is not None else "?"}
    if node is None or not isinstance(port, int):
        return CableEnd(**end), []
    lk, mods = _links(fabric)
    mod = mods.get((node, port)) if mods else None
    notes: list[str] = []
    if mod is not None and (m := mod.value) is not None:
        notes = [f"{node}:p{port}: {n}" for n, _ in links.advisories(fabric.cluster, m)]
        end |= {
            "vendor": m.vendor_name,
            "part": m.vendor_pn,
            "serial": m.vendor_sn,
            "length_m": m.length_m,
            "type": m.transceiver_type,
        }
    rail = next((r for r in fabric.cluster.rails if r.node == node and r.port == port), None)
    if lk and rail:
        eth, fec = lk.ethtool.get(rail.id), lk.fec.get(rail.id)
        if eth is not None and eth.value is not None:
            end["speed_mbps"] = eth.value.speed_mbps
        if fec is not None and fec.value is not None:
            end["fec"] = fec.value.active
    return CableEnd(**end), notes


def cables(fabric: Fabric, items: Sequence[Item], figures: Sequence[Measurement]) -> list[Cable]:
    found = _found(fabric)
    # Each item and figure indexed once: a walk of all of them per cable is quadratic in N.
    by_cable: dict[str, list[Status]] = {}
    for it in items:
        for cid in it.properties.get("cables", "").split(","):
            by_cable.setdefault(cid, []).append(STATUS_OF[it.outcome])
    ber_of: dict[str, list[float]] = {}
    for m in figures:
        if m.kind == "ber_max":
            ber_of.setdefault(m.objects[0], []).append(m.value)
    out = []
    for c in fabric.plan.cables:
        ends = [(c.a_node, c.a_port), (c.b_node, c.b_port)]
        # The rails of the node ports it plugs into (a switch leg has none).
        rails = [r for r in fabric.cluster.rails if (r.node, r.port) in ends]
        bers = [v for r in rails for v in ber_of.get(r.id, [])]
        (a, a_notes), (b, b_notes) = (_end(fabric, *e) for e in ends)
        out.append(
            Cable(
                id=c.id,
                a=a,
                b=b,
                found=found.get(c.id),
                worst_ber=max(bers, default=None),
                status=worst(by_cable.get(c.id, [])),
                notes=(*a_notes, *b_notes),
            )
        )
    return out


def _found(fabric: Fabric) -> dict[str, str]:
    """Plan cable id -> the cable as LLDP found it, where that differs: each cable of a
    mistake is given to the first planned cable it shares a port with (that port first), so a
    swap of two cables names both as they run."""
    from pytest_sparkfabric.measure import cabling

    seen = _phase(fabric, cabling.NAME, cabling.Cabling)
    out: dict[str, str] = {}
    for m in seen.mistakes if seen is not None else ():
        left = list(m.found)
        for w in m.planned:
            now = next((f for f in left if f.key & w.key), None)
            if now is not None:
                left.remove(now)
                near = w.a if w.a in now.key else w.b
                out[w.id] = f"{near.id}<->{now.far(near).id}"
    return out


# -- phases and thresholds ----------------------------------------------------------------------


def _rounds(fabric: Fabric, name: PhaseName) -> int | None:
    from pytest_sparkfabric.measure import rdma

    count: dict[str, Callable[[Any], int]] = {
        rdma.LOOPBACK: lambda lb: lb.rounds,
        rdma.NAME: lambda run: len(run.schedule.rounds),
        rdma.TCP: lambda tr: max(tr.round_of.values(), default=0),
    }
    got = _phase(fabric, name, object) if name in count else None
    return count[name](got) if got is not None else None


def phases(fabric: Fabric) -> list[Phase]:
    return [
        Phase(
            name=name,
            rounds=_rounds(fabric, name),
            real_s=round(real_s, 3),
            transport_s=round(transport_s, 3) if transport_s is not None else None,
        )
        for name, (real_s, transport_s) in fabric.timings.items()
    ]


def thresholds(fabric: Fabric) -> dict[str, Threshold]:
    return {
        name: Threshold(value=t.value, kind=t.kind, unit=t.unit, source=t.source)
        for name, t in fabric.thresholds.items()
    }
