"""iputils ``ping`` with the DF bit: the end-to-end MTU gate.

``ping -M do -s <mtu-28> -I <netdev> <peer>``. When the local MTU is smaller, iputils prints
``ping: local error: message too long, mtu=N`` (IPv4; ``mtu: N`` in the IPv6 code path) once
per packet, through error(3), so on stderr, and exits 1. A smaller MTU further along the path
usually just loses the packets (100% loss). ``-w`` bounds the whole run; ``-W 1`` each reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import ClassVar, Literal

from pytest_sparkfabric import shell

Verdict = Literal["ok", "local_mtu", "lost", "error"]

_STATS = re.compile(
    r"(\d{1,12}) packets transmitted, (\d{1,12}) (?:packets )?received"
    r"(?:, \+(\d{1,12}) duplicates)?(?:, \+(\d{1,12}) errors)?, (\d{1,3}(?:\.\d+)?)% packet loss"
)
_MTU = re.compile(r"local error: message too long, mtu\s*[=:]\s*(\d{1,9})", re.IGNORECASE)
_RTT = re.compile(r"(?:rtt|round-trip) min/avg/max(?:/mdev)? = \d+(?:\.\d+)?/(\d+(?:\.\d+)?)/")


@dataclass(frozen=True, slots=True)
class PingResult:
    transmitted: int | None
    received: int | None
    loss_pct: float | None
    local_mtu_error: int | None
    verdict: Verdict
    error_text: str | None = None
    errors: int | None = None
    rtt_avg_ms: float | None = None
    rc: int | None = None

    _json_properties: ClassVar[tuple[str, ...]] = ("ok",)

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"


def build_ping(
    peer: IPv4Address,
    *,
    interface: str,
    payload_bytes: int,
    count: int = 3,
    deadline_s: int | None = None,
) -> shell.Command:
    """``ping -M do -s N -I IF -c C -W 1 -w D PEER``; the deadline defaults to count + 2 s."""
    if isinstance(payload_bytes, bool) or not 0 <= payload_bytes <= 65507:
        raise ValueError(f"payload_bytes must be within 0..65507, got {payload_bytes!r}")
    if isinstance(count, bool) or count < 1:
        raise ValueError(f"count must be >= 1, got {count!r}")
    deadline = count + 2 if deadline_s is None else deadline_s
    if isinstance(deadline, bool) or deadline < 1:
        raise ValueError(f"deadline_s must be >= 1, got {deadline!r}")
    return shell.join(
        [
            "ping",
            "-M",
            "do",
            "-s",
            str(payload_bytes),
            "-I",
            interface,
            "-c",
            str(count),
            "-W",
            "1",
            "-w",
            str(deadline),
            str(IPv4Address(peer)),
        ]
    )


def _first_error_line(stdout: str, stderr: str) -> str | None:
    for line in (*stderr.splitlines(), *stdout.splitlines()):
        if line.strip().startswith("ping:"):
            return line.strip()
    stripped = stderr.strip()
    return stripped.splitlines()[0] if stripped else None


def parse_ping(text_stdout: str, text_stderr: str = "", rc: int | None = None) -> PingResult:
    """Classify one ping run. Never raises: text that holds no statistics is an ``error``."""
    both = f"{text_stdout}\n{text_stderr}"
    mtu = _MTU.search(both)
    stats = _STATS.search(text_stdout) or _STATS.search(text_stderr)
    rtt = _RTT.search(text_stdout)
    transmitted = received = errors = None
    loss: float | None = None
    if stats:
        transmitted, received = int(stats.group(1)), int(stats.group(2))
        errors = int(stats.group(4)) if stats.group(4) else 0
        loss = float(stats.group(5))
    verdict: Verdict
    error_text: str | None = None
    if mtu:
        verdict = "local_mtu"
        error_text = mtu.group(0)
    elif stats is None or transmitted == 0 or (rc is not None and rc >= 2):
        verdict = "error"
        error_text = _first_error_line(text_stdout, text_stderr) or "no ping statistics"
    elif received == transmitted and not errors and (rc is None or rc == 0):
        verdict = "ok"
    else:
        verdict = "lost"
        error_text = f"{transmitted} sent, {received} received ({loss:g}% loss)"
    return PingResult(
        transmitted=transmitted,
        received=received,
        loss_pct=loss,
        local_mtu_error=int(mtu.group(1)) if mtu else None,
        verdict=verdict,
        error_text=error_text,
        errors=errors,
        rtt_avg_ms=float(rtt.group(1)) if rtt else None,
        rc=rc,
    )


def parse_ping_text(text: str) -> PingResult:
    """For ``sparkfabric parse ping FILE``: stdout and stderr together, exit code unknown."""
    return parse_ping(text, "", None)
