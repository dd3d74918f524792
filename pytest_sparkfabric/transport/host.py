"""Adapter: a testinfra Host whose backend runs through our Transport.

testinfra gives users a familiar API (`node_host.file(...)`, `.interface(...)`, `.sysctl(...)`),
but its backends have no per-command deadline; ours does, so all commands come through here.
"""

from __future__ import annotations

from typing import Any

import testinfra.host
from testinfra.backend.base import BaseBackend, CommandResult

from pytest_sparkfabric.transport.base import Job, Transport

DEFAULT_TIMEOUT_S = 60.0


class NodeUnreachable(RuntimeError):
    pass


class SparkfabricBackend(BaseBackend):  # type: ignore[misc]
    NAME = "sparkfabric"

    def __init__(self, transport: Transport, node: str) -> None:
        self._transport = transport
        self._node = node
        super().__init__(node)

    def get_pytest_id(self) -> str:
        return self._node

    def run(self, command: str, *args: str, **kwargs: Any) -> CommandResult:
        text = self.quote(command, *args)
        timeout = float(kwargs.get("timeout", DEFAULT_TIMEOUT_S))
        result = self._transport.run(Job(self._node, text, timeout, sudo=self.sudo))
        if result.transport_error:
            raise NodeUnreachable(result.transport_error)
        return self.result(result.rc, self.encode(text), result.stdout, result.stderr)

    def get_encoding(self) -> str:
        return "utf-8"


def make_host(transport: Transport, node: str) -> testinfra.host.Host:
    """A testinfra Host for `node` whose commands go through `transport` (deadline included)."""
    backend = SparkfabricBackend(transport, node)
    host = testinfra.host.Host(backend)
    backend.set_host(host)
    return host
