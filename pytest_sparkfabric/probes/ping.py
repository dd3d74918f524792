"""iputils `ping -M do -s <mtu-28> -I <netdev> <peer>`, the MTU gate (ping.c): `local error:
message too long, mtu=N` is `local_mtu`, `Frag needed and DF set (mtu = N)` `path_mtu`, packets
lost behind a plain L2 switch `lost`; statistics as ping_common.c `finish` prints, French too."""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import ClassVar, Literal

from pytest_sparkfabric import shell

Verdict = Literal["ok", "local_mtu", "path_mtu", "lost", "error"]

_STATS = re.compile(
    r"(\d{1,12}) (?:packets transmitted|paquets transmis), (\d{1,12}) (?:packets )?"
    r"(?:received|reçus)"
    r"(?:, \+(\d{1,12}) (?:duplicates|doublons))?"
    r"(?:, \+(\d{1,12}) corrupted)?"
    r"(?:, \+(\d{1,12}) (?:errors|erreurs))?"
    r"(?:, (\d{1,3}(?:[.,]\d+)?)% (?:packet loss|de perte))?"
)
_MTU = re.compile(r"local error: message too long, mtu\s*[=:]\s*(\d{1,9})", re.IGNORECASE)
_FRAG = re.compile(
    r"From (?P<hop>[^\s()]+(?: \([^)\s]+\))?) icmp_seq=\d{1,9}\s+"
    r"Frag needed and DF set \(mtu = (?P<mtu>\d{1,9})\)"
)
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

    _json_properties: ClassVar[tuple[str, ...]] = ("ok",)

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"


def build_ping(peer: IPv4Address, *, interface: str, payload_bytes: int) -> shell.Command:
    """``ping -M do -s N -I IF -c 3 -W 1 -w 5 PEER``: three probes, the run over in 5 s."""
    if isinstance(payload_bytes, bool) or not 0 <= payload_bytes <= 65507:
        raise ValueError(f"payload_bytes must be within 0..65507, got {payload_bytes!r}")
    argv = ["ping", "-M", "do", "-s", str(payload_bytes), "-I", interface]
    return shell.join([*argv, "-c", "3", "-W", "1", "-w", "5", str(IPv4Address(peer))])


def _first_error_line(stdout: str, stderr: str) -> str:
    for line in (*stderr.splitlines(), *stdout.splitlines()):
        if line.strip().startswith("ping:"):
            return line.strip()
    return stderr.strip().splitlines()[0] if stderr.strip() else "no ping statistics"


def parse_ping(text_stdout: str, text_stderr: str = "", rc: int | None = None) -> PingResult:
    """Classify one ping run. Never raises: text that holds no statistics is an ``error``."""
    # No-break spaces come from localized catalogues (fr: "64\u00a0octets"); CRs from pastes.
    stdout, stderr = (
        t.replace("\u00a0", " ").replace("\r", "") for t in (text_stdout, text_stderr)
    )
    mtu, frag = (p.search(f"{stdout}\n{stderr}") for p in (_MTU, _FRAG))
    stats = _STATS.search(stdout) or _STATS.search(stderr)
    rtt = _RTT.search(stdout)
    sent = got = errors = None
    loss: float | None = None
    if stats:
        sent, got, errors = int(stats.group(1)), int(stats.group(2)), int(stats.group(5) or 0)
        if stats.group(6) is not None:
            loss = float(stats.group(6).replace(",", "."))
        elif sent:  # nothing transmitted: no loss figure is printed, none can be computed
            loss = (sent - got) * 100.0 / sent
    verdict: Verdict = "lost"
    error_text: str | None = None
    if frag:  # before local_mtu: the kernel caches the router's MTU, later sends fail locally
        verdict, error_text = "path_mtu", " ".join(frag.group(0).split())
    elif mtu:
        verdict, error_text = "local_mtu", mtu.group(0)
    elif not sent or (rc is not None and rc >= 2):
        verdict, error_text = "error", _first_error_line(stdout, stderr)
    elif got == sent and not errors and (rc is None or rc == 0):
        verdict = "ok"
    else:
        shown = f"{loss:g}% loss" if loss is not None else "no loss figure"
        error_text = f"{sent} sent, {got} received ({shown})"
    mtu_bytes, rtt_ms = int(mtu[1]) if mtu else None, float(rtt[1]) if rtt else None
    return PingResult(sent, got, loss, mtu_bytes, verdict, error_text, errors, rtt_ms)
