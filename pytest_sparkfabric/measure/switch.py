"""One pass of read-only calls that every switch check asserts on (DOMAIN.md §7)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

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

T = TypeVar("T")


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
