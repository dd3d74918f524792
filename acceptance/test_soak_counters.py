"""Lossy-RoCE counters over the heat soak (issue 12 item 3): the rail's `ethtool -S` drop,
pause and ECN counters between the soak's first and last reading, judged as over the RDMA
rounds (acceptance/test_qos.py). A file of its own so it runs after test_soak.py, which starts
the soak."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.measure import counters, rail_counters, soak

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Rail, Verdict

pytestmark = pytest.mark.soak


def test_soak_counters(rail: Rail, fabric: Fabric, verdict: Verdict) -> None:
    """The same judgement over the heat soak (its first and last `ethtool -S` reading of the
    rail; the soak reads no hw_counters)."""
    rail_counters.declare(fabric, rail, verdict)
    run = soak.run(fabric)
    samples = soak.rail_samples(fabric, rail)
    if len(samples) < 2:
        errors = run.read_errors.get(rail.id, ["no reading"])
        verdict.not_measured(
            f"{rail.node} {rail.netdev}: {len(samples)} ethtool -S reading(s) during the soak; "
            f"{errors[-1]}",
            nodes=[rail.node],
        )
    first, last = samples[0], samples[-1]
    d = counters.delta(
        counters.snapshot(first.t, first.stats, None), counters.snapshot(last.t, last.stats, None)
    )
    verdict(measured=", ".join(f"{k} +{v}" for k, v in sorted(d.growth.items()) if v) or "0")
    rail_counters.check(fabric, rail, verdict, d, f"the soak ({last.t - first.t:.0f} s)")
