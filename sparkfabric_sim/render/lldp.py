"""lldpd's `lldpctl` default text, as lldpd's text writer prints a Linux neighbour.

Layout from the real samples in tests/data/lldpctl/ (lldpd src/client/text_writer.c): 79-dash
rules, `LLDP neighbors:`, per neighbour an `Interface:` line, a `Chassis:` section (ChassisID
`mac ...`, SysName, SysDescr, MgmtIP, Capability lines) and a `Port:` section. A Linux peer
running lldpd sends its netdev's MAC as PortID and the netdev name as PortDescr (sample
vagrant-lldpcli-interactive-linux-peer-portid-mac-padded-sections.txt).
"""

from __future__ import annotations

from dataclasses import dataclass

RULE = "-" * 79


@dataclass(frozen=True, slots=True)
class Neighbour:
    local_port: str
    rid: int
    age_s: int
    chassis_mac: str
    sys_name: str
    sys_descr: str
    mgmt_ip: str
    port_mac: str
    port_descr: str


def _age(seconds: int) -> str:
    days, rest = divmod(max(0, seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days} day, {hours:02d}:{minutes:02d}:{secs:02d}"


def lldpctl(neighbours: list[Neighbour]) -> str:
    lines = [RULE, "LLDP neighbors:", RULE]
    for n in neighbours:
        lines += [
            f"Interface:    {n.local_port}, via: LLDP, RID: {n.rid}, Time: {_age(n.age_s)}",
            "  Chassis:     ",
            f"    ChassisID:    mac {n.chassis_mac}",
            f"    SysName:      {n.sys_name}",
            f"    SysDescr:     {n.sys_descr}",
            f"    MgmtIP:       {n.mgmt_ip}",
            "    Capability:   Bridge, off",
            "    Capability:   Router, off",
            "    Capability:   Wlan, off",
            "    Capability:   Station, on",
            "  Port:        ",
            f"    PortID:       mac {n.port_mac}",
            f"    PortDescr:    {n.port_descr}",
            "    TTL:          120",
            RULE,
        ]
    return "\n".join(lines) + "\n"
