"""Cable EEPROMs: recorded for the acceptance record, with advisories (DOMAIN.md §6)."""

from __future__ import annotations

import warnings

import pytest

from pytest_sparkfabric import Fabric, Node, Verdict, objects
from pytest_sparkfabric.measure import cable

pytestmark = pytest.mark.links


class CableAdvisory(UserWarning):
    """Something in a cable's EEPROM that cannot be trusted; never a failure by itself."""


def test_cable_eeprom(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """Each cabled port's module EEPROM reads (`ethtool -m`, root): vendor, part, serial,
    length and type go into the report; placeholders and unapproved parts are advisories."""
    seen: list[str] = []
    notes: list[str] = []
    for port in node.ports:
        module = cable.module(fabric, node, port).get()
        length = f"{module.length_m:g} m" if module.length_m is not None else "length ?"
        seen.append(
            f"p{port}: {module.vendor_name or '?'} {module.vendor_pn or '?'} "
            f"SN {module.vendor_sn or '?'}, {length}, {module.transceiver_type or '?'}"
        )
        for note in cable.advisories(module):
            notes.append(f"p{port}: {note}")
            warnings.warn(CableAdvisory(f"{node.name} port {port}: {note}"), stacklevel=1)
    cables = [objects.cable_of(fabric.plan, node.name, port) for port in node.ports]
    verdict(node=node.name, measured="; ".join(seen), expected="a readable module EEPROM")
    verdict(cables=",".join(c.id for c in cables if c is not None))
    verdict(advisory="; ".join(notes) or None)
