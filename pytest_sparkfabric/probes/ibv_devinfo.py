"""rdma-core ``ibv_devinfo`` (libibverbs ``examples/devinfo.c``): each RDMA device's ports,
their state and active MTU (``PORT_ACTIVE (4)``, ``4096 (5)``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

_HCA = re.compile(r"^hca_id:\s*(?P<dev>\S+)\s*$")
_PORT = re.compile(r"^\s+port:\s*(?P<port>\d{1,3})\s*$")
_FIELD = re.compile(r"^\s+(?P<key>[a-z_]+):\s*(?P<value>.*?)\s*$")
_ENUM = re.compile(r"^(?P<name>\S+)\s+\((?P<num>\d+)\)$")


@dataclass(frozen=True, slots=True)
class IbvPort:
    device: str
    port: int
    state: str | None  # PORT_ACTIVE, PORT_DOWN, ...
    active_mtu_bytes: int | None

    @property
    def active(self) -> bool:
        return self.state == "PORT_ACTIVE"


def build_ibv_devinfo(device: str, port: int = 1) -> shell.Command:
    return shell.join(["ibv_devinfo", "-d", device, "-i", str(port)])


def parse_ibv_devinfo(text: str) -> tuple[IbvPort, ...]:
    blocks: list[tuple[str, int, dict[str, str]]] = []
    device: str | None = None
    fields: dict[str, str] | None = None  # of the current port
    for line in text.splitlines():
        if m := _HCA.match(line):
            device, fields = m.group("dev"), None
        elif (m := _PORT.match(line)) and device is not None:
            blocks.append((device, int(m.group("port")), fields := {}))
        elif (m := _FIELD.match(line)) and fields is not None:
            fields.setdefault(m.group("key"), m.group("value"))
    if not blocks:
        raise ParseError(
            "ibv_devinfo",
            "expected 'hca_id:' and 'port:' blocks (no RDMA device of that name?)",
            found_text(text),
        )
    ports = []
    for dev, port, found in blocks:
        state, mtu = (_ENUM.match(found.get(k, "")) for k in ("state", "active_mtu"))
        mtu_bytes = int(mtu["name"]) if mtu and mtu["name"].isdigit() else None
        ports.append(IbvPort(dev, port, state["name"] if state else found.get("state"), mtu_bytes))
    return tuple(ports)
