"""A testinfra Host (`node_host.file(...)`, `.interface(...)`, `.sysctl(...)`) whose backend
runs through our Transport: testinfra's own backends have no per-command deadline."""

from __future__ import annotations

from typing import Any

import testinfra.host
from testinfra.backend.base import BaseBackend, CommandResult

from pytest_sparkfabric.transport.base import Job, Transport


class NodeUnreachable(RuntimeError):
    pass


class SparkfabricBackend(BaseBackend):  # type: ignore[misc]
    NAME = "sparkfabric"

    def __init__(self, transport: Transport, node: str) -> None:
        self._transport, self._node = transport, node
        super().__init__(node)

    def get_pytest_id(self) -> str:
        return self._node

    def run(self, command: str, *args: str, **kwargs: Any) -> CommandResult:
        text = self.quote(command, *args)
        job = Job(self._node, text, float(kwargs.get("timeout", 60.0)), sudo=self.sudo)
        result = self._transport.run(job)
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
