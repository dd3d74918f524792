"""The kernel log (`dmesg`, else `journalctl -k -o short-monotonic`) as typed events, the window
by seconds since boot (no node clock). Wordings from the kernel: mlx5 en_main.c "Link down/up",
pcie/aer.c "AER: ..."/"PCIe Bus Error", mlx5 events.c "High Temperature"; the rest `other`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "kernel-log"
EventKind = Literal["link_down", "link_up", "aer", "thermal", "other"]
Severity = Literal["corrected", "uncorrected", "fatal"]
Source = Literal["dmesg", "journalctl"]

COMMAND = "cat /proc/uptime; dmesg 2>&1 || journalctl -k -b -o short-monotonic --no-pager 2>&1"
"""dmesg first: where it answers (root, or dmesg_restrict=0) it is the whole ring; journalctl
only where dmesg is refused, and without -q, so a journal the user may not read says so."""

_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]\s?(.*)$")
_JOURNAL = re.compile(r"^\S+ kernel: (.*)$")
_DEVICE = re.compile(
    r"^(?P<driver>[\w-]+) (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
    r"(?: (?P<netdev>[^\s:]+))?: (?P<msg>.*)$"
)
_BUS_ERROR = re.compile(
    r"PCIe Bus Error: severity=(Correct|Uncorrect)\w*(?: \((Fatal|Non-Fatal)\))?"
)
_RECEIVED = re.compile(
    r"AER: (?:Multiple )?(Correct|Uncorrect)\w*(?: \((Fatal|Non-Fatal)\))? error "
    r"(?:message )?received(?::| from) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
)
_FUNC_PREFIX = re.compile(r"^\w+:\d+:\(pid \d+\): ")
DMESG_REFUSED = "read kernel buffer failed"
JOURNAL_REFUSED = (
    "not seeing messages from other users and the system",
    "insufficient permissions",
)


@dataclass(frozen=True, slots=True)
class KernelEvent:
    """One kernel message: seconds since boot as stamped, the PCI function it is about (for a
    root port's AER report: the one that erred), and the message after the time stamp (and,
    from journalctl, `host kernel:`)."""

    time_s: float
    pci: str | None
    netdev: str | None
    kind: EventKind
    severity: Severity | None
    line: str


@dataclass(frozen=True, slots=True)
class KernelLog:
    """`uptime_s`: /proc/uptime when the log was read (None in a saved log); `source`: which
    reader answered (None: neither could be read, `refused` says why in the tools' words)."""

    uptime_s: float | None
    events: tuple[KernelEvent, ...]
    source: Source | None
    refused: str | None

    def since(self, t_s: float) -> tuple[KernelEvent, ...]:
        return tuple(e for e in self.events if e.time_s >= t_s)


def _severity(word: str, fatal: str | None) -> Severity:
    if word.startswith("Correct"):
        return "corrected"
    return "fatal" if fatal == "Fatal" else "uncorrected"


def classify(t_s: float, text: str) -> KernelEvent:
    m = _DEVICE.match(text)
    pci, netdev, msg = (m["pci"].lower(), m["netdev"], m["msg"]) if m else (None, None, text)
    mlx5 = m is not None and m["driver"].startswith("mlx5")
    body = _FUNC_PREFIX.sub("", msg).strip()
    kind: EventKind = "other"
    severity: Severity | None = None
    if mlx5 and netdev and body in ("Link down", "Link up"):
        kind = "link_down" if body == "Link down" else "link_up"
    elif (bus := _BUS_ERROR.search(body)) is not None:
        kind, severity = "aer", _severity(bus[1], bus[2])
    elif (got := _RECEIVED.search(body)) is not None:
        kind, severity, pci = "aer", _severity(got[1], got[2]), got[3].lower()
    elif mlx5 and ("High temperature" in body or "High Temperature" in body):
        kind = "thermal"
    return KernelEvent(t_s, pci, netdev, kind, severity, text)


_UPTIME = re.compile(r"^(\d+\.\d+) \d+\.\d+$")


def parse_kernel_log(text: str) -> KernelLog:
    """`COMMAND`'s output, or a saved dmesg / journalctl -k -o short-monotonic (no uptime)."""
    lines = text.splitlines()
    up = _UPTIME.match(lines[0].strip()) if lines else None
    events: list[KernelEvent] = []
    journal = False
    for m in filter(None, map(_STAMP.match, lines[1:] if up else lines)):
        j = _JOURNAL.match(m[2])
        journal = journal or j is not None
        events.append(classify(float(m[1]), j[1] if j else m[2]))
    dmesg_refused = DMESG_REFUSED in text or "dmesg: not found" in text
    journal_refused = any(w in text for w in JOURNAL_REFUSED) or "journalctl: not found" in text
    said = (DMESG_REFUSED, *JOURNAL_REFUSED, "not found")
    refused = (
        "; ".join(line.strip() for line in lines if any(w in line for w in said))
        if dmesg_refused and journal_refused
        else None
    )
    if not events and refused is None and not dmesg_refused and up is None:
        raise ParseError(
            TOOL, "no '[seconds] message' line of dmesg or journalctl", found_text(text)
        )
    source: Source = "journalctl" if journal or dmesg_refused else "dmesg"
    return KernelLog(
        float(up[1]) if up else None, tuple(events), None if refused else source, refused
    )
