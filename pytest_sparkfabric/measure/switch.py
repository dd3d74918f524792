"""The switch, read over REST or its SSH console as `switch.api` says (`auto`: REST first, SSH
where REST fails), in one pass of read-only calls every switch check asserts on (DOMAIN.md §7).
Both ways give `probes.routeros`'s dataclasses, so a check cannot tell which way it was."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from pytest_sparkfabric.measure.engine import PhaseName
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ParseError, routeros
from pytest_sparkfabric.probes import routeros_commands as cmds
from pytest_sparkfabric.probes.routeros import Row, Rows, rest_rows
from pytest_sparkfabric.transport.rest import SwitchClient, SwitchError, SwitchUnreachable

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import Transport
    from pytest_sparkfabric.transport.rest import SwitchConsole

T = TypeVar("T")


def _first(items: Rows, what: str) -> Mapping[str, str]:
    if not items:
        raise ParseError(what, "empty reply")
    return items[0]


class Reads:
    """One switch, read one way: over REST (`client`) or its console; each read says both, and
    `note` says which for the report. Every read raises SwitchError (SwitchUnreachable when the
    switch cannot be read at all) or ParseError."""

    def __init__(
        self,
        client: SwitchClient | None = None,
        console: SwitchConsole | None = None,
        note: str = "",
    ) -> None:
        self.client, self.console = client, console
        self.note = note or ("REST API" if console is None else "SSH console")

    def _rest(self, path: str, body: Mapping[str, str] | None = None) -> tuple[Row, ...]:
        assert self.client is not None  # no console: REST
        return rest_rows(self.client.get(path) if body is None else self.client.post(path, body))

    def _one(
        self, path: str, command: str, rows: Callable[[Rows], T], text: Callable[[str], T]
    ) -> T:
        return rows(self._rest(path)) if self.console is None else text(self.console.run(command))

    def ethernet(self) -> tuple[routeros.EthernetPort, ...]:
        rows, text = routeros.ethernet_from_rest, routeros.parse_ethernet
        return self._one("/interface/ethernet", cmds.ETHERNET, rows, text)

    def bridge_ports(self) -> tuple[routeros.BridgePort, ...]:
        rows, text = routeros.bridge_ports_from_rest, routeros.parse_bridge_ports
        return self._one("/interface/bridge/port", cmds.BRIDGE_PORT, rows, text)

    def qos_ports(self) -> tuple[routeros.QosPort, ...]:
        rows, text = routeros.qos_ports_from_rest, routeros.parse_qos_ports
        return self._one("/interface/ethernet/switch/qos/port", cmds.QOS_PORT, rows, text)

    def resource(self) -> routeros.SystemResource:
        def rows(reply: Rows) -> routeros.SystemResource:
            return routeros.system_resource_from_kv(_first(reply, "routeros /system/resource"))

        return self._one("/system/resource", cmds.RESOURCE, rows, routeros.parse_system_resource)

    def monitor(self, leg: str) -> routeros.EthernetMonitor:
        if self.console is not None:
            return routeros.parse_routeros_monitor(self.console.run(cmds.monitor_command(leg)))
        reply = self._rest("/interface/ethernet/monitor", {"numbers": leg, "once": ""})
        return routeros.ethernet_monitor_from_kv(_first(reply, "routeros monitor"))

    def stats(self, legs: Sequence[str]) -> Mapping[str, routeros.EthernetStats]:
        if self.console is not None:  # one command per leg
            run, text = self.console.run, routeros.parse_ethernet_stats
            return {
                leg: s for leg in legs for s in text(run(cmds.stats_command(leg))) if s.name == leg
            }
        reply = self._rest("/interface/ethernet/print", {"stats": ""})
        found = {s.name: s for s in routeros.ethernet_stats_from_rows(reply) if s.name}
        return {leg: found[leg] for leg in legs if leg in found}


def open_access(transport: Transport, spec: SwitchSpec, base_dir: Path | None = None) -> Reads:
    """The switch's reads as switch.api asks. Raises SwitchUnreachable when no way reads it."""
    if spec.api == "ssh":
        return Reads(console=transport.switch_console(spec, base_dir))
    if spec.api == "rest":
        return Reads(transport.switch_client(spec, base_dir))
    note = "REST API (switch.api auto: REST answered)"
    rest = Reads(transport.switch_client(spec, base_dir), note=note)
    try:
        rest.resource()
        return rest
    except (SwitchError, ParseError) as exc:
        # Unreachable, or answering but not as RouterOS's API does: the console may read it.
        why = str(exc)
    note = f"SSH console (switch.api auto: REST failed: {why})"
    console = Reads(console=transport.switch_console(spec, base_dir), note=note)
    try:
        console.resource()
    except (SwitchError, ParseError) as exc:
        raise SwitchUnreachable(
            f"switch.api auto: neither way reads it; REST: {why}; SSH: {exc}"
        ) from None
    return console


NAME: PhaseName = "switch"


@dataclass(frozen=True)
class SwitchState:
    """What the switch said, each part measured or why not; how it was read (`Reads.note`),
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


def read_switch(reads: Reads, legs: Sequence[str]) -> SwitchState:
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
        reads.note,
        reads,
    )


def measure(fabric: Fabric) -> Measured[SwitchState]:
    spec = fabric.cluster.spec.switch
    if spec is None:
        return Measured.failed("no switch: section in cluster.yaml")
    source = fabric.cluster.source
    try:
        reads = open_access(fabric.transport, spec, source.parent if source else None)
        return Measured.of(read_switch(reads, list(spec.ports.values())))
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
