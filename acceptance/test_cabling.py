"""Cabling: every cable's far end is the box and port cluster.yaml says (DOMAIN.md §2: ring and
mesh run port 0 of each box to port 1 of the next; direct uses the same port at both ends)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import cabling, witness

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Verdict

pytestmark = [pytest.mark.links, pytest.mark.sparkfabric_needs("lldpctl")]


def test_cabling(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """Each cable of the node (LLDP names the far box and port) goes where cluster.yaml says,
    and no port cluster.yaml leaves empty holds the cable instead."""
    found = cabling.cabling(fabric)
    ports = [p for (n, _), p in sorted(found.ports.items()) if n == node.name]
    planned = [p for p in ports if p.planned is not None]
    expected = "; ".join(f"p{p.end.port} <-> {p.planned.text}" for p in planned if p.planned)
    seen = "; ".join(
        f"p{p.end.port} <-> {p.seen.text} ({p.how})" if p.seen else f"p{p.end.port}: {p.how}"
        for p in ports
    )
    verdict(node=node.name, expected=expected, measured=seen)
    # The cabling is solved as a whole (diagnosis.miscabling): each mistake is one cause with
    # the one fix that restores the plan, the same for every item it fails.
    mine = [m for m in found.mistakes if node.name in m.nodes]
    if mine:
        blamed = witness.findings(fabric, on=verdict.path, only=("miscabled", "link_down"))
        witness.fail(verdict, f"{node.name}: " + "; ".join(m.seen for m in mine), blamed)
    unknown = [p for p in planned if p.seen is None and p.planned and p.planned.node is not None]
    if unknown:
        pytest.skip(
            f"{node.name}: far end not measured: {unknown[0].how} (install and run lldpd on "
            "every node to check the cabling)"
        )
