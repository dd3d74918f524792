"""Who a lab belongs to: the process that built it, for as long as that process runs.

A pid alone names no process for long: once it ends, the kernel hands the number to the next
one. The owner is (boot id, pid, start time): the start time is field 22 of /proc/PID/stat, in
clock ticks since boot (proc(5)), and the boot id (/proc/sys/kernel/random/boot_id) changes at
every boot, so no later process, in this boot or the next, matches a recorded owner.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class Owner:
    pid: int
    start_ticks: int
    boot_id: str


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def of(pid: int) -> Owner | None:
    """The running process `pid` (None: no such process, or a zombie, which has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and ')'.
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        state, start_ticks = fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None
    if state in ("Z", "X"):
        return None
    return Owner(pid, start_ticks, _boot_id())


def current() -> Owner:
    me = of(os.getpid())
    if me is None:  # no /proc: the lab cannot run anyway (it needs `ip netns`)
        return Owner(os.getpid(), 0, "")
    return me


def is_running(owner: Owner) -> bool:
    return of(owner.pid) == owner
