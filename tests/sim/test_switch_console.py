"""The simulated switch: RouterOS REST reads (string values, HTTP errors) and its console over
SSH, read back to what REST gives (its healthy values and what its faults change, as the suite
reads them: the fault matrix)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pytest_sparkfabric.measure.switch import Reads
from pytest_sparkfabric.probes.routeros_commands import (
    BRIDGE_PORT,
    ETHERNET,
    QOS_PORT,
    RESOURCE,
    monitor_command,
    stats_command,
)
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.switch import RestError
from sparkfabric_sim.switch_console import grouped
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import sim

LEGS = ("qsfp56-dd-1-1", "qsfp56-dd-1-5", "qsfp56-dd-2-1", "qsfp56-dd-2-5")
READS = ("ethernet", "bridge", "bridge/port", "ethernet/switch/qos/port")


def _both(*faults: str) -> tuple[Reads, Reads, SimTransport]:
    t = sim("demo", *faults)
    spec = t.model.cluster.spec.switch
    assert spec is not None
    return Reads(t.switch_client(spec)), Reads(console=t.switch_console(spec)), t


def test_rest_reads_are_strings_and_errors_look_like_routeros_http_errors() -> None:
    sw = sim("demo").switch
    assert sw is not None
    for path in [*(f"/rest/interface/{p}" for p in READS), "/rest/system/resource"]:
        reply = sw.rest_get(path)
        rows = reply if isinstance(reply, list) else [reply]
        assert rows and all(isinstance(v, str) for row in rows for v in row.values()), path
    with pytest.raises(RestError) as missing:
        sw.rest_get("/rest/interface/nothing")
    assert missing.value.status == 404 and missing.value.body["message"] == "Not Found"
    with pytest.raises(RestError) as no_once:
        sw.rest_post("/rest/interface/ethernet/monitor", {"numbers": "qsfp56-dd-1-1"})
    assert no_once.value.status == 400
    with pytest.raises(RestError):
        sw.rest_post("/rest/interface/ethernet/monitor", {"numbers": "nope", "once": ""})


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
    assert ra.cpu_load_pct == rb.cpu_load_pct and ra.board_name == rb.board_name
    assert ra.version == rb.version
    sa, sb = console.stats(LEGS), rest.stats(LEGS)
    assert {k: v.counters for k, v in sa.items()} == {k: v.counters for k, v in sb.items()}


def test_console_text_layout_log_and_errors_are_routeros() -> None:
    _, reads, t = _both()
    console = reads.console
    assert console is not None
    text = console.run(RESOURCE)
    # Keys right-aligned two columns past the longest (architecture-name here).
    assert "\n           cpu-load: " in text and re.search(r"cpu-load: \d+%\n", text)
    assert "total-memory: 2048.0MiB" in text
    mon = console.run(monitor_command(LEGS[0]))
    assert "            status: link-ok\n" in mon and "full-duplex: yes" in mon
    assert console.run(stats_command(LEGS[0])).lstrip().startswith("name: qsfp56-dd-1-1")
    assert console.run("/interface ethernet frobnicate").startswith("bad command name")
    assert console.run("/interface ethernet monitor nope once") == "no such item\n"
    assert grouped("182334805898") == "182 334 805 898"
    assert grouped("0") == "0" and grouped("1000") == "1 000"
    # every command is logged, and every one the suite sends is a read
    _, reads, t = _both()
    console = reads.console
    assert console is not None
    sent = [ETHERNET, *map(monitor_command, LEGS), BRIDGE_PORT, QOS_PORT, RESOURCE]
    for command in [*sent, *map(stats_command, LEGS)]:
        console.run(command)
    assert t.switch is not None
    assert t.switch.console_log == [*sent, *map(stats_command, LEGS)]


def test_cpu_load_is_high_only_while_traffic_crosses_a_cpu_forwarding_switch() -> None:
    rest, console, t = _both("{fault: switch_cpu_forwarding}")
    before = console.resource().cpu_load_pct
    a, b = t.model.nodes["spark-1"], t.model.nodes["spark-2"]
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
