"""Versions across the nodes: one table of ConnectX firmware, mlx5 driver, kernel and GPU
driver; a node that differs from the rest fails, naming the component and the node."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.measure import facts
from pytest_sparkfabric.outcome import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Verdict

pytestmark = [pytest.mark.links, pytest.mark.sparkfabric_needs("ethtool", "nvidia-smi")]


def test_versions_match(fabric: Fabric, verdict: Verdict) -> None:
    """Every node runs the same ConnectX firmware, mlx5 driver, kernel and GPU driver."""
    verdict(expected="the same versions on every node")
    table = facts.versions(fabric)
    rows: list[str] = []
    drift: list[str] = []
    odd_nodes: list[str] = []
    unread: list[str] = []
    for component in facts.COMPONENTS:
        values: dict[str, str] = {}
        for node, row in table.items():
            m = row[component]
            if m.value is None:
                unread.append(f"{component}: {m.error}")
            else:
                values[node] = m.value
        rows.append(f"{component}: " + ", ".join(f"{n} {v}" for n, v in values.items()))
        odd = facts.odd_ones(values)
        if odd:
            odd_nodes += [n for n in odd if n not in odd_nodes]
            rest = sorted(set(values.values()) - set(odd.values()))
            drift.append(
                f"{component} "
                + ", ".join(f"{n} runs {v}" for n, v in odd.items())
                + f" while the others run {', '.join(rest)}"
            )
    verdict(measured="; ".join(rows))
    if drift:
        verdict.fail(
            "versions differ between nodes: " + "; ".join(drift),
            "version_drift",
            objects=[objects.node(n) for n in odd_nodes],
        )
    if unread:
        raise NotMeasured("; ".join(unread))
