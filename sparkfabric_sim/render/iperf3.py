"""iperf 3.16 `-J` documents, printed the way its bundled cJSON prints them.

cJSON_Print: tab indentation, `"key":<TAB>value`, arrays of objects as `[{ ... }, { ... }]`,
an empty object as `{` newline `}`, numbers as `%d` when integral (and within int range) else
`%1.15g`, or `%1.17g` when 15 digits do not round-trip.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sparkfabric_sim import noise

VERSION = "iperf 3.16"
INT_MAX = 2**31 - 1
EPOCH = 1748736000.0  # virtual t=0 is 2025-06-01 00:00:00 UTC
Json = object


def _number(x: float) -> str:
    if type(x) is int and -INT_MAX - 1 <= x <= INT_MAX:  # counts: most numbers of a document
        return str(x)
    if isinstance(x, bool):
        raise TypeError("bool is not a number")
    x = float(x)  # cJSON holds every number as a double
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x.is_integer() and -INT_MAX - 1 <= x <= INT_MAX:
        return str(int(x))
    text = f"{x:1.15g}"
    return text if float(text) == x else f"{x:1.17g}"


def cjson(value: Json, depth: int = 0) -> str:
    kind = type(value)
    if kind is float or kind is int:  # most values: checked first (a document has ~1000)
        return _number(value)  # type: ignore[arg-type]
    if kind is str:
        return _string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (dict, Mapping)):
        if not value:
            return "{\n" + "\t" * depth + "}"
        inner = "\t" * (depth + 1)
        items = [f"{inner}{_string(k)}:\t{cjson(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "\t" * depth + "}"
    if isinstance(value, (list, Sequence)):
        return "[" + ", ".join([cjson(v, depth + 1) for v in value]) + "]"
    raise TypeError(f"not JSON: {value!r}")


@functools.lru_cache(maxsize=1024)  # keys and short strings repeat in every document
def _string(text: str) -> str:
    return json.dumps(text)


def document(value: Json) -> str:
    return cjson(value) + "\n"


def _timestamp(t: float) -> dict[str, Json]:
    secs = int(EPOCH + t)
    return {
        "time": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(secs)),
        "timesecs": secs,
    }


BUILD = "#16-Ubuntu SMP PREEMPT_DYNAMIC Fri Sep  5 19:32:10 UTC 2025"
COOKIE_CHARS = "abcdefghijklmnopqrstuvwxyz234567"


def system_info(host: str, kernel: str, arch: str) -> str:
    return f"Linux {host} {kernel} {BUILD} {arch}"


def error_document(host: str, kernel: str, arch: str, message: str) -> str:
    return document(
        {
            "start": {
                "connected": [],
                "version": VERSION,
                "system_info": system_info(host, kernel, arch),
            },
            "intervals": [],
            "end": {},
            "error": f"error - {message}",
        }
    )


@dataclass(frozen=True, slots=True)
class TcpRun:
    host: str
    kernel: str
    arch: str
    local: str
    remote: str
    port: int
    streams: int
    duration_s: int
    gbps: float
    mss: int
    start_t: float
    seed: int
    key: str


def client_document(run: TcpRun) -> str:
    per_stream = run.gbps * 1e9 / max(1, run.streams)
    sockets = [5 + i for i in range(run.streams)]
    ports = [41000 + noise.hex_id(run.seed, 12, run.key, "port", i) for i in sockets]
    connected = [
        {
            "socket": s,
            "local_host": run.local,
            "local_port": p,
            "remote_host": run.remote,
            "remote_port": run.port,
        }
        for s, p in zip(sockets, ports, strict=True)
    ]
    intervals: list[Json] = []
    totals = {s: 0 for s in sockets}
    for i in range(run.duration_s):
        streams: list[Json] = []
        moved_sum = 0
        for s in sockets:
            target = int(per_stream * (i + 1) / 8)
            if i + 1 < run.duration_s:
                target = int(target * noise.uniform(run.seed, 0.995, 1.005, run.key, "iv", i, s))
            moved = max(0, target - totals[s])
            totals[s] += moved
            moved_sum += moved
            streams.append(
                {
                    "socket": s,
                    "start": i,
                    "end": i + 1,
                    "seconds": 1,
                    "bytes": moved,
                    "bits_per_second": moved * 8.0,
                    "retransmits": 0,
                    "snd_cwnd": 3145728,
                    "snd_wnd": 3145728,
                    "rtt": 412,
                    "rttvar": 57,
                    "pmtu": run.mss + 52,
                    "omitted": False,
                    "sender": True,
                }
            )
        intervals.append(
            {
                "streams": streams,
                "sum": {
                    "start": i,
                    "end": i + 1,
                    "seconds": 1,
                    "bytes": moved_sum,
                    "bits_per_second": moved_sum * 8.0,
                    "retransmits": 0,
                    "omitted": False,
                    "sender": True,
                },
            }
        )
    d = float(run.duration_s)
    recv_end = d + 0.000412
    end_streams: list[Json] = []
    for s in sockets:
        b = totals[s]
        end_streams.append(
            {
                "sender": {
                    "socket": s,
                    "start": 0,
                    "end": d,
                    "seconds": d,
                    "bytes": b,
                    "bits_per_second": b * 8 / d,
                    "retransmits": 0,
                    "max_snd_cwnd": 3145728,
                    "max_snd_wnd": 3145728,
                    "max_rtt": 655,
                    "min_rtt": 207,
                    "mean_rtt": 412,
                    "sender": True,
                },
                "receiver": {
                    "socket": s,
                    "start": 0,
                    "end": recv_end,
                    "seconds": d,
                    "bytes": b,
                    "bits_per_second": b * 8 / recv_end,
                    "sender": True,
                },
            }
        )
    total = sum(totals.values())
    return document(
        {
            "start": {
                "connected": connected,
                "version": VERSION,
                "system_info": system_info(run.host, run.kernel, run.arch),
                "timestamp": _timestamp(run.start_t),
                "connecting_to": {"host": run.remote, "port": run.port},
                "cookie": "".join(noise.rng(run.seed, run.key).choices(COOKIE_CHARS, k=36)),
                "tcp_mss_default": run.mss,
                "target_bitrate": 0,
                "fq_rate": 0,
                "sock_bufsize": 0,
                "sndbuf_actual": 16384,
                "rcvbuf_actual": 131072,
                "test_start": {
                    "protocol": "TCP",
                    "num_streams": run.streams,
                    "blksize": 131072,
                    "omit": 0,
                    "duration": run.duration_s,
                    "bytes": 0,
                    "blocks": 0,
                    "reverse": 0,
                    "tos": 0,
                    "target_bitrate": 0,
                    "bidir": 0,
                    "fqrate": 0,
                    "interval": 1,
                },
            },
            "intervals": intervals,
            "end": {
                "streams": end_streams,
                "sum_sent": {
                    "start": 0,
                    "end": d,
                    "seconds": d,
                    "bytes": total,
                    "bits_per_second": total * 8 / d,
                    "retransmits": 0,
                    "sender": True,
                },
                "sum_received": {
                    "start": 0,
                    "end": recv_end,
                    "seconds": recv_end,
                    "bytes": total,
                    "bits_per_second": total * 8 / recv_end,
                    "sender": True,
                },
                "cpu_utilization_percent": {
                    "host_total": 38.51,
                    "host_user": 1.12,
                    "host_system": 37.39,
                    "remote_total": 24.07,
                    "remote_user": 0.83,
                    "remote_system": 23.24,
                },
                "sender_tcp_congestion": "cubic",
                "receiver_tcp_congestion": "cubic",
            },
        }
    )


def _human_bytes(n: float) -> str:
    for unit, size in (("GBytes", 2**30), ("MBytes", 2**20), ("KBytes", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{n:.0f} Bytes"


def server_text(port: int, local: str, remote: str, seconds: float, gbps: float) -> str:
    moved = gbps * 1e9 / 8 * seconds
    dash = "-" * 59
    return (
        f"{dash}\nServer listening on {port} (test #1)\n{dash}\n"
        f"Accepted connection from {remote}, port 40962\n"
        f"[  5] local {local} port {port} connected to {remote} port 40974\n"
        "[ ID] Interval           Transfer     Bitrate\n"
        f"[SUM]   0.00-{seconds:.2f}  sec  {_human_bytes(moved)}  {gbps:.1f} Gbits/sec"
        "                  receiver\n"
    )
