"""The switch, read over REST or its SSH console as `switch.api` says (`auto`: REST first, SSH
where REST fails), in one pass of read-only calls every switch check asserts on (DOMAIN.md §7).
Both ways give `probes.routeros`'s dataclasses, so a check cannot tell which way it was."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Literal, TypeVar

from pytest_sparkfabric.measure.engine import PhaseName
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ParseError, routeros
from pytest_sparkfabric.probes import routeros_commands as cmds
from pytest_sparkfabric.probes.routeros import Row, rest_rows
from pytest_sparkfabric.transport.rest import SwitchClient, SwitchError, SwitchUnreachable

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import Transport
    from pytest_sparkfabric.transport.rest import SwitchConsole

Api = Literal["rest", "ssh"]


def _first(items: tuple[Row, ...], what: str) -> Row:
    if not items:
        raise ParseError(what, "empty reply")
    return items[0]


class RestReads:
    api: Api = "rest"

    def __init__(self, client: SwitchClient) -> None:
        self.client = client

    def ethernet(self) -> tuple[routeros.EthernetPort, ...]:
        return routeros.ethernet_from_rest(rest_rows(self.client.get("/interface/ethernet")))

    def monitor(self, leg: str) -> routeros.EthernetMonitor:
        reply = self.client.post("/interface/ethernet/monitor", {"numbers": leg, "once": ""})
        return routeros.ethernet_monitor_from_kv(_first(rest_rows(reply), "routeros monitor"))

    def bridge_ports(self) -> tuple[routeros.BridgePort, ...]:
        return routeros.bridge_ports_from_rest(rest_rows(self.client.get("/interface/bridge/port")))

    def qos_ports(self) -> tuple[routeros.QosPort, ...]:
        reply = self.client.get("/interface/ethernet/switch/qos/port")
        return routeros.qos_ports_from_rest(rest_rows(reply))

    def resource(self) -> routeros.SystemResource:
        reply = rest_rows(self.client.get("/system/resource"))
        return routeros.system_resource_from_kv(_first(reply, "routeros /system/resource"))

    def stats(self, legs: Sequence[str]) -> Mapping[str, routeros.EthernetStats]:
        reply = self.client.post("/interface/ethernet/print", {"stats": ""})
        found = {s.name: s for s in routeros.ethernet_stats_from_rows(rest_rows(reply)) if s.name}
        return {leg: found[leg] for leg in legs if leg in found}


class ConsoleReads:
    """The console commands of `routeros_commands`, one per read (and per leg)."""

    api: Api = "ssh"

    def __init__(self, console: SwitchConsole) -> None:
        self.console = console

    def ethernet(self) -> tuple[routeros.EthernetPort, ...]:
        return routeros.parse_ethernet(self.console.run(cmds.ETHERNET))

    def monitor(self, leg: str) -> routeros.EthernetMonitor:
        return routeros.parse_routeros_monitor(self.console.run(cmds.monitor_command(leg)))

    def bridge_ports(self) -> tuple[routeros.BridgePort, ...]:
        return routeros.parse_bridge_ports(self.console.run(cmds.BRIDGE_PORT))

    def qos_ports(self) -> tuple[routeros.QosPort, ...]:
        return routeros.parse_qos_ports(self.console.run(cmds.QOS_PORT))

    def resource(self) -> routeros.SystemResource:
        return routeros.parse_system_resource(self.console.run(cmds.RESOURCE))

    def stats(self, legs: Sequence[str]) -> Mapping[str, routeros.EthernetStats]:
        return {
            leg: s
            for leg in legs
            for s in routeros.parse_ethernet_stats(self.console.run(cmds.stats_command(leg)))
            if s.name == leg
        }


Reads = RestReads | ConsoleReads
"""One switch, read one way; every read raises SwitchError (SwitchUnreachable when the switch
cannot be read at all) or ParseError."""


@dataclass(frozen=True)
class Access:
    reads: Reads
    note: str  # how the switch is read, for the report: REST, SSH console, or auto's choice


def open_access(transport: Transport, spec: SwitchSpec, base_dir: Path | None = None) -> Access:
    """The switch's reads as switch.api asks. Raises SwitchUnreachable when no way reads it."""
    if spec.api == "rest":
        return Access(RestReads(transport.switch_client(spec, base_dir)), "REST API")
    if spec.api == "ssh":
        return Access(ConsoleReads(transport.switch_console(spec, base_dir)), "SSH console")
    rest = RestReads(transport.switch_client(spec, base_dir))
    try:
        rest.resource()
        return Access(rest, "REST API (switch.api auto: REST answered)")
    except (SwitchError, ParseError) as exc:
        # Unreachable, or answering but not as RouterOS's API does: the console may read it.
        why = str(exc)
    console = ConsoleReads(transport.switch_console(spec, base_dir))
    try:
        console.resource()
    except (SwitchError, ParseError) as exc:
        raise SwitchUnreachable(
            f"switch.api auto: neither way reads it; REST: {why}; SSH: {exc}"
        ) from None
    return Access(console, f"SSH console (switch.api auto: REST failed: {why})")


T = TypeVar("T")
NAME: PhaseName = "switch"


@dataclass(frozen=True)
class SwitchState:
    """What the switch said, each part measured or why not; how it was read (`Access.note`),
    and those reads for the samples taken during traffic (counters, CPU)."""

    ethernet: Measured[Mapping[str, routeros.EthernetPort]]
    monitor: Mapping[str, Measured[routeros.EthernetMonitor]]
    bridge_ports: Measured[tuple[routeros.BridgePort, ...]]
    qos: Measured[Mapping[str, routeros.QosPort]]
    resource: Measured[routeros.SystemResource]
    api: str = "REST API"
    reads: Reads | None = field(default=None, compare=False, repr=False)


def _read(what: str, call: Callable[[], T]) -> Measured[T]:
    try:
        return Measured.of(call())
    except SwitchUnreachable:
        raise
    except (SwitchError, ParseError) as exc:
        return Measured.failed(f"switch: {what}: {exc}")


def read_switch(reads: Reads, legs: Sequence[str], note: str) -> SwitchState:
    """Ports, each leg's link monitor, bridge ports, QoS ports and the CPU load. Raises
    SwitchUnreachable when the switch cannot be read at all; any other failure only leaves its
    own part unmeasured."""
    return SwitchState(
        _read("/interface/ethernet", lambda: {p.name: p for p in reads.ethernet() if p.name}),
        {leg: _read(f"monitor {leg}", partial(reads.monitor, leg)) for leg in legs},
        _read("/interface/bridge/port", reads.bridge_ports),
        _read(
            "/interface/ethernet/switch/qos/port",
            lambda: {q.name: q for q in reads.qos_ports() if q.name},
        ),
        _read("/system/resource", reads.resource),
        note,
        reads,
    )


def measure(fabric: Fabric) -> Measured[SwitchState]:
    spec = fabric.cluster.spec.switch
    if spec is None:
        return Measured.failed("no switch: section in cluster.yaml")
    source = fabric.cluster.source
    try:
        access = open_access(fabric.transport, spec, source.parent if source else None)
        return Measured.of(read_switch(access.reads, list(spec.ports.values()), access.note))
    except SwitchError as exc:
        return Measured.failed(f"switch {spec.host}: {exc}")


def state(fabric: Fabric) -> Measured[SwitchState]:
    return fabric.phase(NAME, measure)


def leg_note(fabric: Fabric, node: str) -> tuple[str, RuleId | None]:
    """For a node without link: its switch leg (text), and `autoneg_failed` where the switch
    says the leg was left on auto-negotiation (nothing when the switch cannot be read)."""
    spec = fabric.cluster.spec.switch
    if (leg := spec.ports.get(node) if spec else None) is None:
        return "", None
    note = f"; its cable lands on switch port {leg}"
    if (seen := state(fabric).value) is None:
        return note, None
    port = (seen.ethernet.value or {}).get(leg)
    status = mon.value if (mon := seen.monitor.get(leg)) is not None else None
    if (status and status.auto_negotiation == "failed") or (port and port.auto_negotiation):
        return f"{note}, left on auto-negotiation", "autoneg_failed"
    return note, None
