"""`thresholds.ping_loss_pct` decides whether a ping with some loss counts as answered: no loss
always; some loss only within the limit; total loss and local errors never."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.measure.reach import passes
from pytest_sparkfabric.probes.ping import parse_ping

STATS = (
    "--- 192.168.100.12 ping statistics ---\n"
    "{sent} packets transmitted, {got} received, {loss}% packet loss, time 2003ms\n"
)
LOCAL = "ping: local error: message too long, mtu=1500\n"


@pytest.mark.parametrize(
    ("sent", "got", "loss", "stderr", "limit", "ok"),
    [
        (3, 3, 0, "", 0, True),
        (10, 9, 10, "", 0, False),
        (10, 9, 10, "", 10, True),
        (10, 9, 10, "", 9.9, False),
        (3, 0, 100, "", 100, False),
        (3, 0, 100, LOCAL, 100, False),
    ],
)
def test_loss_within_the_limit(
    sent: int, got: int, loss: int, stderr: str, limit: float, ok: bool
) -> None:
    p = parse_ping(STATS.format(sent=sent, got=got, loss=loss), stderr, 0 if got == sent else 1)
    assert passes(p, limit) is ok
