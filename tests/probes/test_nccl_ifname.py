"""NCCL_SOCKET_IFNAME as NCCL reads it (src/misc/socket.cc, src/os/linux.cc, v2.30.7-1)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes.ncclconf import Iface, select_socket_ifs

NODE = [
    Iface("lo", True, True),
    Iface("enP7s7", True, True),
    Iface("docker0", True, True),
    Iface("enp1s0f1np1", True, True),
    Iface("enp1s0f0np0", False, True),
    Iface("wlP9s9", True, False),
]


@pytest.mark.parametrize(
    ("value", "selected"),
    [
        ("enP7s7", ["enP7s7"]),
        ("=enP7s7", ["enP7s7"]),
        ("enP7", ["enP7s7"]),
        ("=enP7", []),
        ("eth0", []),
        ("enp1s0f0np0", []),  # no carrier: not running
        ("wlP9s9", []),  # no address
        ("^docker,lo", ["enP7s7", "enp1s0f1np1"]),
        ("^=docker0", ["lo", "enP7s7", "enp1s0f1np1"]),
        ("enp1s0f1np1:1", ["enp1s0f1np1"]),
        ("^", ["enP7s7", "enp1s0f1np1"]),  # one character: unset
        ("^=", []),  # an empty exclude list excludes everything
        ("e", ["enP7s7", "enp1s0f1np1"]),  # one character: unset
        (None, ["enP7s7", "enp1s0f1np1"]),  # unset: no ib*, then ^docker,lo,virbr
        ("ENP7S7", []),
    ],
)
def test_selection_follows_nccls_rules(value: str | None, selected: list[str]) -> None:
    assert select_socket_ifs(value, NODE) == selected


def test_unset_falls_back_to_docker_then_lo() -> None:
    only = [Iface("lo", True, True), Iface("docker0", True, True)]
    assert select_socket_ifs(None, only) == ["docker0"]
    assert select_socket_ifs(None, only[:1]) == ["lo"]
    assert select_socket_ifs(None, [Iface("ib0", True, True), *NODE]) == ["ib0"]
