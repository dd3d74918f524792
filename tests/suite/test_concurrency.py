"""All jumbo pings of a cluster run in one concurrent round: the 8-node switched cluster's
whole ping matrix costs the (virtual) time of one ping."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.measure.engine import QUICK_S, Fabric
from pytest_sparkfabric.probes.ping import build_ping
from pytest_sparkfabric.session import get_session
from pytest_sparkfabric.transport import Job, make_transport
from tests.suite.runner import EXAMPLES, run_suite

pytestmark = pytest.mark.slow

SWITCH_8 = EXAMPLES / "switch-8.yaml"


def _one_ping_s() -> float:
    """The virtual duration of one jumbo ping, run alone on a fresh simulated cluster."""
    cluster = load_cluster(SWITCH_8)
    transport = make_transport(cluster)
    d = Fabric(cluster, transport).plan.directed[0]
    command = build_ping(d.dst.address.ip, interface=d.src.netdev, payload_bytes=cluster.mtu - 28)
    t0 = transport.clock.now()
    transport.run(Job(d.src.node, command, QUICK_S))
    return transport.clock.now() - t0


class _PingClock:
    """Reads the session's transport clock before and after each jumbo-ping item."""

    def __init__(self) -> None:
        self.times: list[float] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        session = get_session(item.config)
        assert session is not None
        ping = item.name.startswith("test_jumbo_ping[")
        self.times += [session.transport.clock.now()] if ping else []
        try:
            return (yield)
        finally:
            self.times += [session.transport.clock.now()] if ping else []


def test_suite_pings_run_concurrently(pytester: pytest.Pytester) -> None:
    probe = _PingClock()
    run = run_suite(pytester, SWITCH_8, "--durations=5", markers="mtu", plugins=[probe])
    assert run.ret == 0
    pings = [k for k in run.outcomes if k.startswith("test_jumbo_ping[")]
    assert len(pings) == 32
    # 32 pings of ~2 s each: one round, not 32 (nor one per node).
    assert probe.times[-1] - probe.times[0] == pytest.approx(_one_ping_s(), rel=0.25)
    # --durations: the first ping item carries the round; the others read its result.
    assert "slowest 5 durations" in run.stdout
