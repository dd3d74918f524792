"""Pure probes: one module per tool, each builds a command line and parses its output.

Nothing in this package runs a command or touches the network: a probe turns text into a
frozen dataclass, or raises :class:`ParseError` when the text does not hold what the tool
prints on success. Every parser is total: it never lets IndexError, KeyError or ValueError
of its own escape.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import ipaddress
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["PARSERS", "ParseError", "to_jsonable"]


class ParseError(ValueError):
    """The tool output lacks what a successful run prints.

    ``tool`` names the tool, ``missing`` says what was not found and, where known, what
    usually causes that (it is the message an operator reads in a failed test).
    """

    def __init__(self, tool: str, missing: str) -> None:
        super().__init__(f"{tool}: {missing}")
        self.tool = tool
        self.missing = missing

    def __reduce__(self) -> tuple[Any, ...]:
        # Keeps the two attributes across pickling (pytest-xdist ships exceptions between workers).
        return (type(self), (self.tool, self.missing))


# Lazy on purpose: importing the package must stay cheap, and the probe modules import
# ParseError from here, so importing them eagerly would be circular.
_PARSER_PATHS: dict[str, tuple[str, str]] = {
    "ib_write_bw": ("perftest", "parse_ib_write_bw"),
    "iperf3": ("iperf3", "parse_iperf3_json"),
    "nccl-tests": ("nccl", "parse_nccl_tests"),
    "ethtool": ("ethtool", "parse_ethtool"),
    "ethtool-stats": ("ethtool", "parse_ethtool_stats"),
    "ethtool-module": ("ethtool", "parse_ethtool_module"),
    "ethtool-fec": ("ethtool", "parse_ethtool_fec"),
    "ip-addr": ("ip", "parse_ip_addr_json"),
    "ping": ("ping", "parse_ping_text"),
    "nvidia-smi": ("nvidia_smi", "parse_gpu_query"),
    "ibdev2netdev": ("ibdev2netdev", "parse_ibdev2netdev"),
    "routeros-monitor": ("routeros_reads", "parse_routeros_monitors"),
    "routeros-resource": ("routeros_reads", "parse_system_resource"),
    "routeros-ethernet": ("routeros_reads", "parse_ethernet"),
    "routeros-bridge-port": ("routeros_reads", "parse_bridge_ports"),
    "routeros-qos": ("routeros_reads", "parse_qos_ports"),
    "routeros-stats": ("routeros_reads", "parse_ethernet_stats"),
}


class _LazyParsers(Mapping[str, Callable[[str], object]]):
    def __getitem__(self, key: str) -> Callable[[str], object]:
        module_name, func_name = _PARSER_PATHS[key]
        module = importlib.import_module(f"{__name__}.{module_name}")
        func: Callable[[str], object] = getattr(module, func_name)
        return func

    def __iter__(self) -> Iterator[str]:
        return iter(_PARSER_PATHS)

    def __len__(self) -> int:
        return len(_PARSER_PATHS)


PARSERS: Mapping[str, Callable[[str], object]] = _LazyParsers()

_Address = (
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
)


def to_jsonable(obj: object) -> object:
    """Turn a probe result (nested dataclasses, tuples, addresses, mappings) into JSON data.

    Dataclasses become objects of their fields plus the names a class lists in
    ``_json_properties`` (derived values such as ``bw_avg_gbps``). Non-finite floats become
    None because JSON has no NaN or infinity.
    """
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, enum.Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, _Address):
        return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, object] = {
            f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)
        }
        for name in getattr(type(obj), "_json_properties", ()):
            out[name] = to_jsonable(getattr(obj, name))
        return out
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (frozenset, set)):
        return sorted((to_jsonable(v) for v in obj), key=repr)
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(v) for v in obj]
    return str(obj)
