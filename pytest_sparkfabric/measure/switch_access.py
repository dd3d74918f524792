"""The switch's reads, the same over REST and over its SSH console: each gives the dataclasses
of `probes.routeros`, so a check cannot tell which way the switch was read.

`switch.api` picks the way: `rest` (JSON, `transport.switch`), `ssh` (the console commands of
`probes.routeros_commands`, parsed by `probes.routeros`) or `auto`: REST first, and SSH
where REST cannot be reached at all (connection, TLS, login); `Access.note` says which was used
and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes import routeros as console_parse
from pytest_sparkfabric.probes.routeros import (
    BridgePort,
    EthernetMonitor,
    EthernetPort,
    EthernetStats,
    QosPort,
    SystemResource,
    bridge_ports_from_rest,
    ethernet_from_rest,
    ethernet_monitor_from_kv,
    ethernet_stats_from_rows,
    qos_ports_from_rest,
    system_resource_from_kv,
)
from pytest_sparkfabric.probes.routeros_commands import (
    BRIDGE_PORT,
    ETHERNET,
    QOS_PORT,
    RESOURCE,
    monitor_command,
    stats_command,
)
from pytest_sparkfabric.probes.routeros_text import Row, rest_rows
from pytest_sparkfabric.transport.rest import SwitchError, SwitchUnreachable

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.transport import Transport
    from pytest_sparkfabric.transport.rest import SwitchClient, SwitchConsole

Api = Literal["rest", "ssh"]


class Reads(Protocol):
    """One switch, read one way; every method raises SwitchError (SwitchUnreachable when the
    switch cannot be read at all) or ParseError."""

    api: Api

    def ethernet(self) -> tuple[EthernetPort, ...]: ...

    def monitor(self, leg: str) -> EthernetMonitor: ...

    def bridge_ports(self) -> tuple[BridgePort, ...]: ...

    def qos_ports(self) -> tuple[QosPort, ...]: ...

    def resource(self) -> SystemResource: ...

    def stats(self, legs: Sequence[str]) -> Mapping[str, EthernetStats]: ...


def _first(items: tuple[Row, ...], what: str) -> Row:
    if not items:
        raise ParseError(what, "empty reply")
    return items[0]


class RestReads:
    api: Api = "rest"

    def __init__(self, client: SwitchClient) -> None:
        self.client = client

    def ethernet(self) -> tuple[EthernetPort, ...]:
        return ethernet_from_rest(rest_rows(self.client.get("/interface/ethernet")))

    def monitor(self, leg: str) -> EthernetMonitor:
        reply = self.client.post("/interface/ethernet/monitor", {"numbers": leg, "once": ""})
        return ethernet_monitor_from_kv(_first(rest_rows(reply), "routeros monitor"))

    def bridge_ports(self) -> tuple[BridgePort, ...]:
        return bridge_ports_from_rest(rest_rows(self.client.get("/interface/bridge/port")))

    def qos_ports(self) -> tuple[QosPort, ...]:
        reply = self.client.get("/interface/ethernet/switch/qos/port")
        return qos_ports_from_rest(rest_rows(reply))

    def resource(self) -> SystemResource:
        reply = self.client.get("/system/resource")
        return system_resource_from_kv(_first(rest_rows(reply), "routeros /system/resource"))

    def stats(self, legs: Sequence[str]) -> Mapping[str, EthernetStats]:
        reply = self.client.post("/interface/ethernet/print", {"stats": ""})
        found = {s.name: s for s in ethernet_stats_from_rows(rest_rows(reply)) if s.name}
        return {leg: found[leg] for leg in legs if leg in found}


class ConsoleReads:
    """The console commands of `routeros_commands`, one per read (one per leg where REST takes
    the leg as an argument too)."""

    api: Api = "ssh"

    def __init__(self, console: SwitchConsole) -> None:
        self.console = console

    def ethernet(self) -> tuple[EthernetPort, ...]:
        return console_parse.parse_ethernet(self.console.run(ETHERNET))

    def monitor(self, leg: str) -> EthernetMonitor:
        return console_parse.parse_routeros_monitor(self.console.run(monitor_command(leg)))

    def bridge_ports(self) -> tuple[BridgePort, ...]:
        return console_parse.parse_bridge_ports(self.console.run(BRIDGE_PORT))

    def qos_ports(self) -> tuple[QosPort, ...]:
        return console_parse.parse_qos_ports(self.console.run(QOS_PORT))

    def resource(self) -> SystemResource:
        return console_parse.parse_system_resource(self.console.run(RESOURCE))

    def stats(self, legs: Sequence[str]) -> Mapping[str, EthernetStats]:
        out: dict[str, EthernetStats] = {}
        for leg in legs:
            for s in console_parse.parse_ethernet_stats(self.console.run(stats_command(leg))):
                if s.name == leg:
                    out[leg] = s
        return out


@dataclass(frozen=True)
class Access:
    reads: Reads
    note: str
    """How the switch is read, for the report: `REST`, `SSH console`, or auto's choice."""


def open_access(transport: Transport, spec: SwitchSpec, base_dir: Path | None = None) -> Access:
    """The switch's reads as switch.api asks. Raises SwitchUnreachable when no way reads it."""
    if spec.api == "rest":
        return Access(RestReads(transport.switch_client(spec, base_dir)), "REST API")
    if spec.api == "ssh":
        return Access(ConsoleReads(transport.switch_console(spec, base_dir)), "SSH console")
    rest: Reads = RestReads(transport.switch_client(spec, base_dir))
    try:
        rest.resource()
        return Access(rest, "REST API (switch.api auto: REST answered)")
    except SwitchUnreachable as exc:
        why = str(exc)
    except (SwitchError, ParseError) as exc:
        # REST answers but not as RouterOS's API does: the console may still read it.
        why = str(exc)
    console = ConsoleReads(transport.switch_console(spec, base_dir))
    try:
        console.resource()
    except (SwitchError, ParseError) as exc:
        raise SwitchUnreachable(
            f"switch.api auto: neither way reads it; REST: {why}; SSH: {exc}"
        ) from None
    return Access(console, f"SSH console (switch.api auto: REST failed: {why})")
