"""iperf3 `-J`: command lines and the JSON report. An `"error"` key is a result, not a parse
failure (3.11-3.13 exit 0 on a refused connection, esnet/iperf#1405); a stray line around the
document is tolerated; one cut short (8192-byte pipe, killed client) says where it stops."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any, ClassVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text, positive

TOOL = "iperf3"


@dataclass(frozen=True, slots=True)
class Iperf3Result:
    error: str | None
    sent_gbps: float | None
    received_gbps: float | None
    streams: int | None
    retransmits: int | None
    local_host: str | None = None

    _json_properties: ClassVar[tuple[str, ...]] = ("ok",)

    @property
    def ok(self) -> bool:
        return self.error is None and self.received_gbps is not None


def _bind(bind: IPv4Address | None) -> list[str]:
    return ["-B", str(IPv4Address(bind))] if bind is not None else []


def build_iperf3_server(
    *, port: int, one_off: bool = True, bind: IPv4Address | None = None
) -> shell.Command:
    parts = ["iperf3", "-s", "-p", positive("port", port), *(["-1"] if one_off else [])]
    return shell.join(parts + _bind(bind))


def build_iperf3_client(
    peer: IPv4Address,
    *,
    streams: int,
    duration_s: int,
    port: int,
    bind: IPv4Address | None = None,
) -> shell.Command:
    parts = ["iperf3", "-c", str(IPv4Address(peer)), "-P", positive("streams", streams)]
    parts += ["-t", positive("duration_s", duration_s), "-p", positive("port", port), "-J"]
    return shell.join(parts + _bind(bind))


def _obj(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: object) -> int | None:
    # int() of an int, not of its float: exact above 2**53, and no OverflowError.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if isinstance(value, int) or value.is_integer() else None


def _gbps(section: Mapping[str, Any]) -> float | None:
    bps = section.get("bits_per_second")
    return bps / 1e9 if isinstance(bps, (int, float)) and not isinstance(bps, bool) else None


def _load(text: str) -> object:
    start, end = text.find("{"), text.rfind("}")
    # Also tolerates a stray line around the document (an ssh banner, a warning, a ``^C`` echo).
    for candidate in (text, text[start : end + 1] if start >= 0 else ""):
        with contextlib.suppress(ValueError, RecursionError):
            return json.loads(candidate)
    if start < 0:
        raise ParseError(
            TOOL, "expected a JSON report (was -J given? did iperf3 run?)", found_text(text)
        )
    try:
        return json.loads(text[start:])
    except RecursionError:
        raise ParseError(TOOL, "expected a JSON report", "nesting too deep") from None
    except json.JSONDecodeError as exc:
        tail = text.rstrip()[-60:].replace("\r", "").replace("\n", " ")
        raise ParseError(
            TOOL,
            f"expected a complete JSON report; it breaks off at line {exc.lineno} column "
            f"{exc.colno} ({exc.msg}): the output was cut short (iperf3 killed, a buffer cut)",
            f"... {tail!r}",
        ) from None


def parse_iperf3_json(text: str) -> Iperf3Result:
    data = _load(text)
    if not isinstance(data, Mapping):
        raise ParseError(TOOL, "JSON output is not an object")
    start, end = _obj(data.get("start")), _obj(data.get("end"))
    connected = start.get("connected")
    first_conn = _obj(connected[0]) if isinstance(connected, list) and connected else {}
    error_text = None if (error := data.get("error")) is None else str(error)
    sent, received = _obj(end.get("sum_sent")), _obj(end.get("sum_received"))
    if not sent and not received:
        # UDP runs summarise in end.sum only.
        sent = received = _obj(end.get("sum"))
    if error_text is None and not sent and not received:
        raise ParseError(
            TOOL,
            "expected end.sum_sent/sum_received or an error key (the run did not finish)",
            f"keys {sorted(str(k) for k in data)} and end keys {sorted(str(k) for k in end)}",
        )
    streams = _int(_obj(start.get("test_start")).get("num_streams"))
    end_streams = end.get("streams")
    if streams is None and isinstance(end_streams, list) and end_streams:
        streams = len(end_streams)
    host = first_conn.get("local_host")
    retransmits, host = _int(sent.get("retransmits")), host if isinstance(host, str) else None
    return Iperf3Result(error_text, _gbps(sent), _gbps(received), streams, retransmits, host)
