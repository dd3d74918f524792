"""Which network interfaces an ``NCCL_SOCKET_IFNAME`` value lets NCCL use (bootstrap, Socket
transport, the IB transport's out-of-band address).

Source: NVIDIA/nccl v2.30.7-1 src/misc/socket.cc (``ncclFindInterfaces``) and src/os/linux.cc
(the interface scan), with ``parseStringList``/``matchIfList`` of src/misc/utils.cc: one
leading ``^`` (exclude) is stripped, then one leading ``=`` (exact); entries are a comma list
matched by prefix (case-sensitive), any ``:port`` suffix ignored; a value of one character or
less counts as unset. Only interfaces that are running and carry an IPv4 or IPv6 address count.
Unset, NCCL tries ``ib`` interfaces, then (skipping NCCL_COMM_ID's subnet search) everything
but ``docker``, ``lo`` and ``virbr``, then ``docker``, ``lo``, ``virbr`` in that order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

UNSET_ORDER = (("ib", False), ("docker,lo,virbr", True), ("docker", False), ("lo", False))
"""Unset: (prefix list, exclude) tried in order until one selects an interface."""


@dataclass(frozen=True, slots=True)
class Iface:
    name: str
    running: bool
    has_address: bool


def _match(names: Sequence[Iface], body: str, exclude: bool) -> list[str]:
    exact = body.startswith("=")
    if exact:
        body = body[1:]
    prefixes = [p.split(":")[0] for p in body.split(",") if p.split(":")[0]]

    def hit(name: str) -> bool:
        if not prefixes:
            return True
        return any(name == p if exact else name.startswith(p) for p in prefixes)

    return [i.name for i in names if i.running and i.has_address and hit(i.name) != exclude]


def select_socket_ifs(value: str | None, interfaces: Sequence[Iface]) -> list[str]:
    """The interfaces NCCL may pick, in the node's order (it takes the first)."""
    if value is None or len(value) <= 1:
        for body, exclude in UNSET_ORDER:
            found = _match(interfaces, body, exclude)
            if found:
                return found
        return _match(interfaces, "virbr", False)
    exclude = value.startswith("^")
    return _match(interfaces, value[1:] if exclude else value, exclude)
