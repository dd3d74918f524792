"""Lossy-RoCE counters over the heat soak (issue 12 item 3): the rail's drop, pause and ECN
counters in every window of the soak, judged as over the traffic rounds (acceptance/test_qos.py;
post-FEC growth in the soak is test_soak_link's). A file of its own so it runs after
test_soak.py, which starts the soak."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import counters, soak
from pytest_sparkfabric.outcome import NotMeasured

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Rail, Verdict

pytestmark = [
    pytest.mark.soak,
    pytest.mark.sparkfabric_needs("ib_write_bw", "ethtool", on="cluster"),
]


def test_soak_counters(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The same judgement over each window of the soak."""
    counters.declare(fabric, rail, verdict)
    windows = soak.rail_windows(fabric, rail)
    good = [w for w in windows if w.error is None]
    if not good:
        why = next((w.error for w in windows if w.error), "no ethtool -S reading")
        raise NotMeasured(
            f"{rail.node} {rail.netdev}: no counter window during the soak; {why}",
            nodes=[rail.node],
        )
    verdict(measured=counters.totals(good))
    counters.check(fabric, rail, verdict, good, post_fec=False)
