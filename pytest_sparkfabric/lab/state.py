"""lab.json: what `up` created, written before each thing is made, so `down` can undo a
half-finished `up` as well as a whole one."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "lab.json"
VERSION = 1


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
    # the switch's RouterOS REST endpoint: pid and address (switch topology only)
    routeros_pid: int | None = None
    routeros: str = ""
    applied: list[str] = field(default_factory=list)
    version: int = VERSION

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
