"""The simulated switch over SSH: RouterOS's console text, read back to what REST gives."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pytest_sparkfabric.measure.switch import ConsoleReads, RestReads
from pytest_sparkfabric.probes.routeros_commands import (
    RESOURCE,
    monitor_command,
    stats_command,
    switch_reads,
)
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.switch_console import grouped
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, with_faults

LEGS = ("qsfp56-dd-1-1", "qsfp56-dd-1-5", "qsfp56-dd-2-1", "qsfp56-dd-2-5")


def _both(*faults: str) -> tuple[RestReads, ConsoleReads, SimTransport]:
    cluster = with_faults("demo", *faults) if faults else example("demo")
    t = SimTransport(cluster)
    spec = cluster.spec.switch
    assert spec is not None
    return RestReads(t.switch_client(spec)), ConsoleReads(t.switch_console(spec)), t


@pytest.mark.parametrize(
    "faults", [(), ("{fault: switch_cpu_forwarding}",), ("{fault: pfc_stall}",)]
)
def test_console_and_rest_read_the_same(faults: tuple[str, ...]) -> None:
    rest, console, _ = _both(*faults)
    assert console.ethernet() == rest.ethernet()
    assert console.bridge_ports() == rest.bridge_ports()
    assert console.qos_ports() == rest.qos_ports()
    for leg in LEGS:
        a, b = console.monitor(leg), rest.monitor(leg)
        assert dataclasses.replace(a, raw={}) == dataclasses.replace(b, raw={})
    ra, rb = console.resource(), rest.resource()
    assert (ra.cpu_load_pct, ra.version, ra.board_name) == (
        rb.cpu_load_pct,
        rb.version,
        rb.board_name,
    )
    sa, sb = console.stats(LEGS), rest.stats(LEGS)
    assert {k: v.counters for k, v in sa.items()} == {k: v.counters for k, v in sb.items()}


def test_console_text_has_routeros_layout() -> None:
    _, console, t = _both()
    text = console.console.run(RESOURCE)
    # Keys right-aligned two columns past the longest (architecture-name here).
    assert "\n           cpu-load: " in text and re.search(r"cpu-load: \d+%\n", text)
    assert "total-memory: 2048.0MiB" in text
    mon = console.console.run(monitor_command(LEGS[0]))
    assert "            status: link-ok\n" in mon and "full-duplex: yes" in mon
    stats = console.console.run(stats_command(LEGS[0]))
    assert stats.lstrip().startswith("name: qsfp56-dd-1-1")
    assert t.switch is not None


def test_every_command_is_logged_and_read_only() -> None:
    _, console, t = _both()
    for read in switch_reads(LEGS):
        console.console.run(read.command)
    assert t.switch is not None
    assert t.switch.console_log == [r.command for r in switch_reads(LEGS)]


def test_unknown_commands_and_items_answer_as_routeros() -> None:
    _, console, _ = _both()
    assert console.console.run("/interface ethernet frobnicate").startswith("bad command name")
    assert console.console.run("/interface ethernet monitor nope once") == "no such item\n"


def test_grouped_digits() -> None:
    assert grouped("182334805898") == "182 334 805 898"
    assert grouped("0") == "0" and grouped("1000") == "1 000"


def test_cpu_load_is_high_only_while_traffic_crosses_a_cpu_forwarding_switch() -> None:
    rest, console, t = _both("{fault: switch_cpu_forwarding}")
    cluster = t.model
    before = console.resource().cpu_load_pct
    a, b = cluster.nodes["spark-1"], cluster.nodes["spark-2"]
    dst = next(d for d in b.cabled if d.rail == 0)
    src = next(d for d in a.cabled if d.rail == 0)
    assert dst.address is not None
    server = t.start(Job("spark-2", f"ib_write_bw -d {dst.rdma} -F --report_gbits -D 10", 60))
    seen: list[int | None] = []
    t.run_many_ticking(
        [Job("spark-1", f"ib_write_bw -d {src.rdma} -F --report_gbits -D 10 {dst.address.ip}", 60)],
        2.0,
        lambda: seen.append(console.resource().cpu_load_pct),
    )
    server.stop()
    after = rest.resource().cpu_load_pct
    assert before is not None and before < 50
    # Samples while the 10 s of traffic flow are busy; those during perftest's teardown idle.
    busy = [x for x in seen if x is not None and x >= 80]
    assert len(busy) >= 4 and seen[0] == busy[0], seen
    assert after is not None and after < 50
