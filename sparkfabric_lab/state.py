"""lab.json: what `up` created, written before each thing is made, so `down` can undo a
half-finished `up` as well as a whole one."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sparkfabric_lab.owner import Owner

STATE_FILE = "lab.json"
VERSION = 3


@dataclass
class LabState:
    lab_dir: str
    source: str = ""
    prefix: str = ""
    mgmt: str = ""
    topology: str = ""
    phase: str = "building"  # building | up | failed
    made_dir: bool = False
    namespaces: list[str] = field(default_factory=list)
    host_links: list[str] = field(default_factory=list)
    # node -> pid of its sshd (the `ip netns exec` process becomes sshd)
    sshd: dict[str, int] = field(default_factory=dict)
    # node -> management address, node -> namespace (for status)
    mgmt_ips: dict[str, str] = field(default_factory=dict)
    node_ns: dict[str, str] = field(default_factory=dict)
    no_sshd: list[str] = field(default_factory=list)
    # the resident simulator (lab/resident.py) and, with a switch, its RouterOS REST address
    resident_pid: int | None = None
    routeros: str = ""
    applied: list[str] = field(default_factory=list)
    # The process that built the lab (lab/owner.py): while it runs, only it takes the lab down.
    owner_pid: int | None = None
    owner_start_ticks: int | None = None
    owner_boot_id: str = ""
    owner_cmdline: str = ""
    # What `up` made, by identity as well as name (namespace inode, host link ifindex): a name
    # freed and taken again by another lab is left alone.
    ns_ids: dict[str, int] = field(default_factory=dict)
    link_ids: dict[str, int] = field(default_factory=dict)
    version: int = VERSION

    @property
    def owner(self) -> Owner | None:
        if self.owner_pid is None or self.owner_start_ticks is None:
            return None
        return Owner(self.owner_pid, self.owner_start_ticks, self.owner_boot_id)

    def set_owner(self, owner: Owner, cmdline: str) -> None:
        self.owner_pid, self.owner_start_ticks = owner.pid, owner.start_ticks
        self.owner_boot_id, self.owner_cmdline = owner.boot_id, cmdline

    @property
    def path(self) -> Path:
        return Path(self.lab_dir) / STATE_FILE

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, lab_dir: Path) -> LabState | None:
        p = lab_dir / STATE_FILE
        try:
            data: dict[str, Any] = json.loads(p.read_text())
        except FileNotFoundError:
            return None
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)
