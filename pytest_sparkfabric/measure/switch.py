"""One pass of read-only calls that every switch check asserts on (DOMAIN.md §7), through the
transport's switch client (the REST API, the simulator's switch, or a recording)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from pytest_sparkfabric.measure.engine import PhaseName
from pytest_sparkfabric.measure.switch_access import Reads, RestReads, open_access
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.routeros import (
    BridgePort,
    EthernetMonitor,
    EthernetPort,
    QosPort,
    SystemResource,
)
from pytest_sparkfabric.transport.rest import SwitchClient, SwitchError, SwitchUnreachable

if TYPE_CHECKING:
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.measure.engine import Fabric

T = TypeVar("T")
NAME: PhaseName = "switch"


@dataclass(frozen=True)
class SwitchState:
    """What the switch said; each part is measured or says why it is not."""

    ethernet: Measured[Mapping[str, EthernetPort]]
    monitor: Mapping[str, Measured[EthernetMonitor]]
    bridge_ports: Measured[tuple[BridgePort, ...]]
    qos: Measured[Mapping[str, QosPort]]
    resource: Measured[SystemResource]
    api: str = "REST API"
    """How the switch was read (REST API, SSH console, or auto's choice and why)."""
    reads: Reads | None = field(default=None, compare=False, repr=False)
    """The way it was read, for the samples taken later (counters, CPU during traffic)."""


def _read(what: str, call: Callable[[], T]) -> Measured[T]:
    try:
        return Measured.of(call())
    except SwitchUnreachable:
        raise
    except (SwitchError, ParseError) as exc:
        return Measured.failed(f"switch: {what}: {exc}")


def _ports_by_name(reads: Reads) -> Mapping[str, EthernetPort]:
    return {p.name: p for p in reads.ethernet() if p.name}


def _qos_by_name(reads: Reads) -> Mapping[str, QosPort]:
    return {q.name: q for q in reads.qos_ports() if q.name}


def read_switch(source: Reads | SwitchClient, legs: Sequence[str], api: str = "") -> SwitchState:
    """Read ports, each leg's link monitor, bridge ports, QoS ports and the CPU load, over
    REST (a client) or any `Reads`.

    Raises SwitchUnreachable when the switch cannot be read at all; any other failure only
    leaves its own part unmeasured."""
    reads: Reads = source if hasattr(source, "ethernet") else RestReads(source)  # type: ignore[assignment]
    ethernet = _read("/interface/ethernet", lambda: _ports_by_name(reads))
    monitor: dict[str, Measured[EthernetMonitor]] = {}
    for leg in legs:
        monitor[leg] = _read(f"monitor {leg}", lambda leg=leg: reads.monitor(leg))  # type: ignore[misc]
    bridge = _read("/interface/bridge/port", reads.bridge_ports)
    qos = _read("/interface/ethernet/switch/qos/port", lambda: _qos_by_name(reads))
    resource = _read("/system/resource", reads.resource)
    note = api or ("SSH console" if reads.api == "ssh" else "REST API")
    return SwitchState(ethernet, monitor, bridge, qos, resource, note, reads)


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
    """Everything the switch checks read, in one pass of read-only calls."""
    return fabric.phase(NAME, measure)


def leg_note(fabric: Fabric, node: str) -> tuple[str, RuleId | None]:
    """For a node without link: its switch leg (text), and `autoneg_failed` where the switch
    says the leg was left on auto-negotiation (nothing when the switch cannot be read)."""
    spec = fabric.cluster.spec.switch
    leg = spec.ports.get(node) if spec else None
    if spec is None or leg is None:
        return "", None
    note = f"; its cable lands on switch port {leg}"
    seen = state(fabric).value
    if seen is None:
        return note, None
    port = (seen.ethernet.value or {}).get(leg)
    mon = seen.monitor.get(leg)
    status = mon.value if mon is not None else None
    failed = status is not None and status.auto_negotiation == "failed"
    if failed or (port is not None and port.auto_negotiation):
        return f"{note}, left on auto-negotiation", "autoneg_failed"
    return note, None
