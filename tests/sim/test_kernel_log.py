"""The simulated kernel log: real dmesg / journalctl formats, the boot lines before any run,
and one "Link down" / "Link up" per outage of a flapping cable on both of its ends."""

from __future__ import annotations

from pytest_sparkfabric.probes.dmesg import COMMAND, parse_kernel_log
from sparkfabric_sim.state import FLAP_AFTER_S, FLAP_DOWN_S
from tests.sim.conftest import R0, out, rdma, sim


def test_a_healthy_node_logs_only_its_boot_and_journalctl_reads_it() -> None:
    t = sim()
    log = parse_kernel_log(out(t, "spark-1", COMMAND))
    assert log.source == "dmesg" and log.uptime_s is not None
    assert [e.kind for e in log.events] == ["other", "other", "link_up", "link_up"]
    assert log.since(log.uptime_s - 60) == ()
    assert "Detected insufficient power on the PCIe slot (27W)." in log.events[0].line
    # journalctl for a user of adm; dmesg is restricted (the hint for others: the matrix's stock)
    journal = out(t, "spark-1", "journalctl -k -b -o short-monotonic --no-pager")
    assert journal.splitlines()[0].endswith(
        "spark-1 kernel: mlx5_core 0000:01:00.0: mlx5_pcie_event:326:(pid 12): Detected "
        "insufficient power on the PCIe slot (27W)."
    )
    assert out(t, "spark-1", "sysctl -n kernel.dmesg_restrict") == "1\n"


def test_a_flap_is_logged_on_both_ends_at_its_time() -> None:
    t = sim("direct-2", "{fault: link_flap, node: spark-2}")
    start = t.clock.now()
    rdma(t, [R0])
    for node in ("spark-1", "spark-2"):
        log = parse_kernel_log(out(t, node, COMMAND))
        assert log.uptime_s is not None
        boot = log.uptime_s - t.clock.now()
        run = sorted((e.time_s - boot, e.kind, e.netdev) for e in log.since(boot))
        assert [(k, n) for _, k, n in run] == [
            ("link_down", "enP2p1s0f1np1"),
            ("link_down", "enp1s0f1np1"),
            ("link_up", "enP2p1s0f1np1"),
            ("link_up", "enp1s0f1np1"),
        ]
        # the first transfer starts once its server listens: a few ms after the call
        down, up = run[0][0], run[2][0]
        assert FLAP_AFTER_S <= down - start < FLAP_AFTER_S + 0.1, run
        assert abs(up - down - FLAP_DOWN_S) < 1e-6, run
