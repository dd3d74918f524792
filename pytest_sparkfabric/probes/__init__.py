"""Pure probes, one module per tool: text in, a frozen dataclass out, or `ParseError`. `PARSERS`
(tool -> parser) is what `sparkfabric parse` offers and the golden test reads; `to_json`
the JSON both print."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

_FOUND_CHARS = 120


def found_text(text: str, *, last: bool = False) -> str:
    """The first (``last``: the final, where output that stopped early got to) non-blank line,
    cut to 120 characters, and the line count, for "expected X, found Y"."""
    lines = [line.strip() for line in text.replace("\r", "\n").split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return "empty output" if not text else "only blank lines"
    quote = lines[-1] if last else lines[0]
    if len(quote) > _FOUND_CHARS:
        quote = quote[: _FOUND_CHARS - 3] + "..."
    if len(lines) == 1:
        return repr(quote)
    if last:
        return f"{len(lines)} lines ending with {quote!r}"
    return f"{quote!r} (+{len(lines) - 1} more lines)"


def positive(name: str, value: int) -> str:
    """A command-line number as text; ValueError when it is below 1 (or a bool)."""
    if isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return str(value)


class ParseError(ValueError):
    """The output lacks what a successful run prints: ``missing`` says what (and, where known,
    the usual cause), ``found`` quotes what it holds instead (mostly `found_text`)."""

    def __init__(self, tool: str, missing: str, found: str | None = None) -> None:
        super().__init__(f"{tool}: {missing}" + (f"; found: {found}" if found else ""))
        self.tool = tool
        self.missing = missing
        self.found = found

    def __reduce__(self) -> tuple[Any, ...]:
        # Keeps the attributes across pickling (pytest-xdist ships exceptions between workers).
        return (type(self), (self.tool, self.missing, self.found))


def _lazy(path: str) -> Callable[[str], object]:
    # Lazy on purpose: importing the package stays cheap, and the probe modules import
    # ParseError from here, so importing them eagerly would be circular.
    module, name = path.split(":")

    def parse(text: str) -> object:
        parser: Callable[[str], object] = getattr(
            importlib.import_module(f"{__name__}.{module}"), name
        )
        return parser(text)

    return parse


PARSERS: Mapping[str, Callable[[str], object]] = {
    tool: _lazy(path)
    for tool, path in {
        "ib_write_bw": "perftest:parse_ib_write_bw",
        "ib_write_lat": "perftest:parse_ib_write_lat",
        "iperf3": "iperf3:parse_iperf3_json",
        "nccl-tests": "nccl:parse_nccl_tests",
        "nccl-conf": "ncclconf:parse_nccl_conf_text",
        "ethtool": "ethtool:parse_ethtool",
        "ethtool-stats": "ethtool:parse_ethtool_stats",
        "ethtool-module": "ethtool:parse_ethtool_module",
        "ethtool-fec": "ethtool:parse_ethtool_fec",
        "ip-addr": "ip:parse_ip_addr_json",
        "ping": "ping:parse_ping",
        "nvidia-smi": "nvidia_smi:parse_nvidia_smi_csv",
        "gpu-burn": "gpu_burn:parse_gpu_burn",
        "ibdev2netdev": "ibdev2netdev:parse_ibdev2netdev",
        "ibv_devinfo": "ibv_devinfo:parse_ibv_devinfo",
        "routeros-monitor": "routeros:parse_routeros_monitors",
        "routeros-resource": "routeros:parse_system_resource",
        "routeros-ethernet": "routeros:parse_ethernet",
        "routeros-bridge-port": "routeros:parse_bridge_ports",
        "routeros-qos": "routeros:parse_qos_ports",
        "routeros-stats": "routeros:parse_ethernet_stats",
        "hw-counters": "hw_counters:parse_hw_counters",
        "mlnx_qos": "mlnx_qos:parse_mlnx_qos",
        "lldpctl": "lldp:parse_lldpctl",
        "sysfs-read": "sysfs:parse_read_files_checked",
        "kernel-log": "dmesg:parse_kernel_log",
    }.items()
}


def to_jsonable(obj: object) -> object:
    """A probe result as JSON data: a dataclass is its fields plus the derived values its class
    lists in ``_json_properties``; NaN and infinities become None; addresses their text."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj)]
        names += getattr(type(obj), "_json_properties", ())
        return {name: to_jsonable(getattr(obj, name)) for name in names}
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (frozenset, set)):
        return sorted((to_jsonable(v) for v in obj), key=repr)
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(v) for v in obj]
    return str(obj)


def to_json(obj: object) -> str:
    return json.dumps(to_jsonable(obj), indent=2, sort_keys=True) + "\n"
