"""Healthy hardware as it ships, on every topology, with the default cluster.yaml checks:
QSFP56 or QSFP112 cables, a kernel whose ethtool prints no `Lanes:`, a realistic PAM4 trickle
(QSFP112 lanes at ~1500 and ~900 corrected bits/s), 100G breakouts declared as such. Each is
ACCEPTED (issue 25, "Done means"). The quick gate runs where the soak is not what varies; the
soak runs short where the lanes' trickle is what is under test."""

from __future__ import annotations

from typing import Any

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

SHORT_SOAK = {"duration_s": 60, "interval_s": 10}
CASES: list[tuple[str, int | None, dict[str, Any], str | None]] = [
    ("direct-2.yaml", None, {"cable_type": "qsfp56", "kernel_lanes": False}, "not soak"),
    ("direct-2.yaml", None, {"cable_type": "qsfp112", "lane_trickle_per_s": 1500}, None),
    (
        "ring-4.yaml",
        None,
        {"cable_type": "qsfp112", "kernel_lanes": False, "lane_trickle_per_s": 900},
        None,
    ),
    ("ring-4.yaml", None, {"cable_type": "qsfp56", "kernel_lanes": False}, "not soak"),
    ("switch-8.yaml", 4, {"kernel_lanes": False, "lane_trickle_per_s": 1500}, None),
    ("switch-8-100g.yaml", 4, {"kernel_lanes": False}, "not soak"),
]


@pytest.mark.parametrize(
    ("base", "nodes", "sim", "markers"),
    CASES,
    ids=[
        f"{b.removesuffix('.yaml')}-{'-'.join(f'{k}={v}' for k, v in s.items())}"
        for b, _, s, _ in CASES
    ],
)
def test_healthy_hardware_is_accepted(
    pytester: pytest.Pytester,
    base: str,
    nodes: int | None,
    sim: dict[str, Any],
    markers: str | None,
) -> None:
    changes: dict[str, Any] = {"simulate": sim}
    if markers is None:
        changes["soak"] = SHORT_SOAK
    path = write_cluster(pytester.path, base, nodes=nodes, changes=changes)
    run = run_suite(pytester, path, markers=markers)
    bad = {k: run.messages[k] for k in run.not_passed if run.outcomes[k] != "warned"}
    assert run.doc["verdict"] == "accepted", bad
    assert any(k.startswith("test_kernel_log[") for k in run.outcomes)
