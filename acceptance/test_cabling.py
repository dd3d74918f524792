"""Cabling: every cable's far end is the box and port cluster.yaml says (DOMAIN.md §2: ring and
mesh run port 0 of each box to port 1 of the next; direct uses the same port at both ends)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.measure import cabling

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Verdict

pytestmark = [pytest.mark.links, pytest.mark.sparkfabric_needs("lldpctl")]


def test_cabling(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """Each cable of the node (LLDP names the far box and port) goes where cluster.yaml says,
    and no port cluster.yaml leaves empty holds the cable instead."""
    ports = [p for (n, _), p in sorted(cabling.cabling(fabric).ports.items()) if n == node.name]
    planned = [p for p in ports if p.planned is not None]
    expected = "; ".join(f"p{p.end.port} <-> {p.planned.text}" for p in planned if p.planned)
    seen = "; ".join(
        f"p{p.end.port} <-> {p.seen.text} ({p.how})" if p.seen else f"p{p.end.port}: {p.how}"
        for p in ports
    )
    verdict(node=node.name, expected=expected, measured=seen)
    problems: list[str] = []
    fixes: list[str] = []
    for p in ports:
        if p.wrong:
            says = p.planned.text if p.planned else "no cable in this port"
            problems.append(f"cabled {p.cable}, cluster.yaml says {says}")
            fixes.append(cabling.fix(fabric, p))
        elif p.planned is None and p.carrier:
            empty = [q for q in planned if not q.carrier]
            where = f" while {empty[0].end.text} has no link" if empty else ""
            problems.append(f"{p.end.text} has a link but cluster.yaml plans no cable there{where}")
            fixes.append(
                f"move the cable from {p.end.text} to "
                f"{empty[0].end.text if empty else 'the port cluster.yaml names'}, or correct "
                "the port numbers in cluster.yaml"
            )
    if problems:
        rule = replace(RULES["miscabled"], fix="; ".join(dict.fromkeys(fixes)))
        verdict.fail(f"{node.name}: " + "; ".join(problems), rule)
    unknown = [p for p in planned if p.seen is None and p.planned and p.planned.node is not None]
    if unknown:
        pytest.skip(
            f"{node.name}: far end not measured: {unknown[0].how} (install and run lldpd on "
            "every node to check the cabling)"
        )
