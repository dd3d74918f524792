"""Cable EEPROMs: recorded for the acceptance record, with warnings (DOMAIN.md §6).

What an EEPROM says is advisory: a placeholder or a part not on the approved list is a warning,
and an EEPROM that cannot be read (`ethtool -m` needs root) is a warning too, never a failure.
"""

from __future__ import annotations

import pytest

from pytest_sparkfabric import Fabric, Node, Verdict, objects
from pytest_sparkfabric.measure import links
from pytest_sparkfabric.outcome import NotMeasured

pytestmark = [pytest.mark.links, pytest.mark.sparkfabric_needs("sudo ethtool -m")]


def test_cable_eeprom(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """Each cabled port's module EEPROM reads (`ethtool -m`, root): vendor, part, serial,
    length and type go into the report; placeholders and unapproved parts are warnings."""
    seen: list[str] = []
    cables = [objects.cable_of(fabric.plan, node.name, port) for port in node.ports]
    verdict(node=node.name, expected="a readable module EEPROM of an approved cable")
    verdict(cables=",".join(c.id for c in cables if c is not None))
    for port, on in zip(node.ports, cables, strict=True):
        about = [on] if on is not None else [objects.port(node.name, port)]
        try:
            module = links.module(fabric, node, port).get()
        except NotMeasured as why:
            seen.append(f"p{port}: not read")
            fix = f" Fix: {why.fix}" if why.fix else ""
            verdict.warn(
                f"{node.name} port {port}: EEPROM not read: {why.reason}.{fix}", objects=about
            )
            continue
        length = f"{module.length_m:g} m" if module.length_m is not None else "length ?"
        seen.append(
            f"p{port}: {module.vendor_name or '?'} {module.vendor_pn or '?'} "
            f"SN {module.vendor_sn or '?'}, {length}, {module.transceiver_type or '?'}"
        )
        for note, warn in links.advisories(fabric.cluster, module):
            if warn:
                verdict.warn(f"{node.name} port {port}: {note}", objects=about)
    verdict(measured="; ".join(seen))
