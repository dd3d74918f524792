"""One pass of read-only calls that every switch check asserts on (DOMAIN.md §7), through the
transport's switch client (the REST API, the simulator's switch, or a recording)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_sparkfabric.measure.engine import PhaseName
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.routeros import (
    BridgePort,
    EthernetMonitor,
    EthernetPort,
    QosPort,
    SystemResource,
    bridge_ports_from_rest,
    ethernet_from_rest,
    ethernet_monitor_from_kv,
    qos_ports_from_rest,
    system_resource_from_kv,
)
from pytest_sparkfabric.result import Measured
from pytest_sparkfabric.transport.switch import SwitchClient, SwitchError, SwitchUnreachable

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


def _rows(reply: Any, what: str) -> tuple[dict[str, str], ...]:
    items = reply if isinstance(reply, list) else [reply]
    out: list[dict[str, str]] = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ParseError("routeros REST", f"{what}: reply is not a list of objects")
        out.append({str(k): v if isinstance(v, str) else str(v) for k, v in item.items()})
    return tuple(out)


def _read(
    what: str, call: Callable[[], Any], parse: Callable[[tuple[dict[str, str], ...]], T]
) -> Measured[T]:
    try:
        return Measured.of(parse(_rows(call(), what)))
    except SwitchUnreachable:
        raise
    except (SwitchError, ParseError) as exc:
        return Measured.failed(f"switch: {exc}")


def _by_name(rows: tuple[dict[str, str], ...]) -> Mapping[str, EthernetPort]:
    return {p.name: p for p in ethernet_from_rest(rows) if p.name}


def _one_monitor(rows: tuple[dict[str, str], ...]) -> EthernetMonitor:
    if not rows:
        raise ParseError("routeros monitor", "empty reply")
    return ethernet_monitor_from_kv(rows[0])


def _qos(rows: tuple[dict[str, str], ...]) -> Mapping[str, QosPort]:
    return {q.name: q for q in qos_ports_from_rest(rows) if q.name}


def _resource(rows: tuple[dict[str, str], ...]) -> SystemResource:
    if not rows:
        raise ParseError("routeros /system/resource", "empty reply")
    return system_resource_from_kv(rows[0])


def read_switch(client: SwitchClient, legs: Sequence[str]) -> SwitchState:
    """Read ports, each leg's link monitor, bridge ports, QoS ports and the CPU load.

    Raises SwitchUnreachable when the switch cannot be read at all; any other failure only
    leaves its own part unmeasured."""
    ethernet = _read("/interface/ethernet", lambda: client.get("/interface/ethernet"), _by_name)
    monitor: dict[str, Measured[EthernetMonitor]] = {}
    for leg in legs:
        monitor[leg] = _read(
            f"monitor {leg}",
            lambda leg=leg: client.post(  # type: ignore[misc]
                "/interface/ethernet/monitor", {"numbers": leg, "once": ""}
            ),
            _one_monitor,
        )
    bridge = _read(
        "/interface/bridge/port",
        lambda: client.get("/interface/bridge/port"),
        bridge_ports_from_rest,
    )
    qos = _read(
        "/interface/ethernet/switch/qos/port",
        lambda: client.get("/interface/ethernet/switch/qos/port"),
        _qos,
    )
    resource = _read("/system/resource", lambda: client.get("/system/resource"), _resource)
    return SwitchState(ethernet, monitor, bridge, qos, resource)


def measure(fabric: Fabric) -> Measured[SwitchState]:
    spec = fabric.cluster.spec.switch
    if spec is None:
        return Measured.failed("no switch: section in cluster.yaml")
    source = fabric.cluster.source
    try:
        client = fabric.transport.switch_client(spec, source.parent if source else None)
        return Measured.of(read_switch(client, list(spec.ports.values())))
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
