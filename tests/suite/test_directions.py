"""`bandwidth.directions`: apart (the default) judges one-way runs by the one-way floors; together
judges both-ways runs by the full-duplex floors, against a simulator whose ports carry
`simulate.full_duplex_gbps` each way while both directions run (issue 25 item 1)."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

PAIR = "test_pair_rdma[spark-1<->spark-2]"


@pytest.mark.parametrize(
    ("directions", "duplex_gbps", "passes"),
    [
        ("together", 170, True),  # the published full-duplex figure: accepted
        ("together", 150, False),  # a port that loses more both ways: below the 165 floor
        ("apart", 150, True),  # one way at a time never meets the duplex budget
    ],
)
def test_the_pair_floor_follows_the_directions(
    pytester: pytest.Pytester, directions: str, duplex_gbps: int, passes: bool
) -> None:
    path = write_cluster(
        pytester.path,
        "direct-2.yaml",
        changes={
            "bandwidth": {"directions": directions},
            "simulate": {"full_duplex_gbps": duplex_gbps},
        },
    )
    run = run_suite(pytester, path, markers="bandwidth")
    assert run.outcomes[PAIR] == ("passed" if passes else "failed"), run.messages[PAIR]
    expected = run.props[PAIR]["expected"]
    assert expected == (">= 165 Gb/s" if directions == "together" else ">= 180 Gb/s")
    if not passes:
        assert "full-duplex" in run.messages[PAIR] and "extrapolated" in run.messages[PAIR]
