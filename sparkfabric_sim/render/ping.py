"""iputils ping (20240117) text: header, reply lines, statistics, local MTU errors."""

from __future__ import annotations

import math
from collections.abc import Sequence


def header(dst: str, source: str | None, device: str | None, size: int) -> str:
    via = ""
    if device is not None or source is not None:
        via = f"from {source or ''} {device or ''}: "
    return f"PING {dst} ({dst}) {via}{size}({size + 28}) bytes of data.\n"


def _ms(rtt_ms: float) -> str:
    """iputils prints reply times with 3 significant digits (usec resolution)."""
    us = round(rtt_ms * 1000)
    if us >= 100000 - 50:
        return f"{us // 1000}"
    if us >= 10000 - 5:
        return f"{us / 1000:.1f}"
    if us >= 1000:
        return f"{us / 1000:.2f}"
    return f"{us / 1000:.3f}"


def reply(dst: str, size: int, seq: int, rtt_ms: float) -> str:
    return f"{size + 8} bytes from {dst}: icmp_seq={seq} ttl=64 time={_ms(rtt_ms)} ms\n"


def unreachable(source: str, seq: int) -> str:
    return f"From {source} icmp_seq={seq} Destination Host Unreachable\n"


def local_mtu_error(mtu: int) -> str:
    return f"ping: local error: message too long, mtu={mtu}\n"


def statistics(
    dst: str, transmitted: int, received: int, errors: int, time_ms: int, rtts: Sequence[float]
) -> str:
    text = (
        f"\n--- {dst} ping statistics ---\n{transmitted} packets transmitted, {received} received"
    )
    if errors:
        text += f", +{errors} errors"
    if transmitted:
        loss = (transmitted - received) * 100.0 / transmitted
        text += f", {loss:g}% packet loss, time {time_ms}ms"
    text += "\n"
    if received and rtts:
        mean = sum(rtts) / len(rtts)
        mdev = math.sqrt(max(0.0, sum(r * r for r in rtts) / len(rtts) - mean * mean))
        text += f"rtt min/avg/max/mdev = {min(rtts):.3f}/{mean:.3f}/{max(rtts):.3f}/{mdev:.3f} ms\n"
    return text
