"""`thresholds.ping_loss_pct` decides whether a ping with some loss counts as answered."""

from __future__ import annotations

from pytest_sparkfabric.measure.reach import passes
from pytest_sparkfabric.probes.ping import parse_ping

STATS = (
    "--- 192.168.100.12 ping statistics ---\n"
    "{sent} packets transmitted, {got} received, {loss}% packet loss, time 2003ms\n"
)


def test_no_loss_always_passes() -> None:
    p = parse_ping(STATS.format(sent=3, got=3, loss=0), "", 0)
    assert passes(p, 0)


def test_some_loss_passes_only_within_the_limit() -> None:
    p = parse_ping(STATS.format(sent=10, got=9, loss=10), "", 1)
    assert not passes(p, 0)
    assert passes(p, 10)
    assert not passes(p, 9.9)


def test_total_loss_and_local_errors_never_pass() -> None:
    lost = parse_ping(STATS.format(sent=3, got=0, loss=100), "", 1)
    assert not passes(lost, 100)
    local = parse_ping(
        STATS.format(sent=3, got=0, loss=100),
        "ping: local error: message too long, mtu=1500\n",
        1,
    )
    assert not passes(local, 100)
