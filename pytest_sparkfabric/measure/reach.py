"""Reachability of the bandwidth schedule's directed rail links: a don't-fragment ping of MTU-28
bytes bound to the sending netdev, all links at once; then, only when a failed item asks, a small
ping, which tells an MTU on the path (small gets through) from a link that carries nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_sparkfabric.measure import bwplan
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.ping import PingResult, build_ping, parse_ping
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster.plan import DirectedLink
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "pings"
SMALL: PhaseName = "small_pings"
SMALL_PING_B = 56
IP_ICMP_HEADERS_B = 28


Pings = Mapping[str, Measured[PingResult]]
"""By directed link id: the ping's result, or why it could not be sent."""


def passes(p: PingResult, max_loss_pct: float) -> bool:
    """Whether a ping counts as answered under `thresholds.ping_loss_pct`: every reply, or a
    loss no larger than the limit with at least one reply and no error (a local MTU refusal or a
    frag-needed is never loss)."""
    return p.ok or (
        p.verdict == "lost"
        and bool(p.received)
        and not p.errors
        and p.loss_pct is not None
        and p.loss_pct <= max_loss_pct
    )


def answered(fabric: Fabric, p: PingResult) -> bool:
    return passes(p, fabric.thresholds["ping_loss_pct"].value)


def measure(fabric: Fabric) -> Pings:
    out: dict[str, Measured[PingResult]] = {}
    links = []
    for d in bwplan.directed_links(fabric.cluster, fabric.plan):
        # Sent from a node that does not answer, a ping cannot run; towards one it can (its
        # kernel answers without a shell) and tells whether the fabric reaches it.
        if gone := fabric.gone((d.src.node,)):
            out[d.id] = Measured.failed(gone.reason)
        else:
            links.append(d)
    if links:
        fabric.progress(f"jumbo DF pings: {len(links)} directed links at once")
        out.update(_round(fabric, links, fabric.cluster.mtu - IP_ICMP_HEADERS_B))
    return out


def measure_small(fabric: Fabric) -> Pings:
    failed = [
        d
        for d in bwplan.directed_links(fabric.cluster, fabric.plan)
        if ((p := ping(fabric, d)).error or not answered(fabric, p.get()))
        and not fabric.gone((d.src.node,))
    ]
    if not failed:
        return {}
    fabric.progress(f"small pings: {len(failed)} links whose jumbo ping failed")
    return _round(fabric, failed, SMALL_PING_B)


def _round(
    fabric: Fabric, links: Sequence[DirectedLink], payload_bytes: int
) -> dict[str, Measured[PingResult]]:
    """One DF ping per directed link, all at once, bound to the sending rail's netdev."""
    jobs = [
        Job(
            d.src.node,
            build_ping(d.dst.address.ip, interface=d.src.netdev, payload_bytes=payload_bytes),
            QUICK_S,
        )
        for d in links
    ]
    return {
        d.id: Measured.failed(f)
        if (f := r.failure())
        else Measured.of(parse_ping(r.stdout, r.stderr, r.rc))
        for d, r in zip(links, fabric.run_all(jobs), strict=True)
    }


def ping(fabric: Fabric, link: DirectedLink) -> Measured[PingResult]:
    """The jumbo DF ping over `link` (every link's in one round)."""
    return fabric.phase(NAME, measure)[link.id]


def small_ping(fabric: Fabric, link: DirectedLink) -> Measured[PingResult] | None:
    """A default-size ping over a link whose jumbo DF ping failed (None where it passed)."""
    return fabric.phase(SMALL, measure_small).get(link.id)
