"""iproute2 `dcb pfc show dev <netdev>` (man dcb-pfc(8), iproute2 5.11+): which priorities have PFC
on where mlnx_qos is absent, from the `prio-pfc 0:off ... 7:off` line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError

_PRIO = re.compile(r"\b([0-7]):(on|off)\b")


@dataclass(frozen=True, slots=True)
class DcbPfc:
    pfc_enabled: tuple[bool, ...]

    @property
    def pfc_priorities(self) -> tuple[int, ...]:
        return tuple(i for i, on in enumerate(self.pfc_enabled) if on)


def build_dcb_pfc(netdev: str) -> shell.Command:
    return shell.join(["dcb", "pfc", "show", "dev", netdev])


def parse_dcb_pfc(text: str) -> DcbPfc:
    for line in text.splitlines():
        flags = dict(_PRIO.findall(line)) if line.split()[:1] == ["prio-pfc"] else {}
        if len(flags) == 8:
            return DcbPfc(tuple(flags[str(p)] == "on" for p in range(8)))
    raise ParseError("dcb", "expected a 'prio-pfc 0:on|off ... 7:on|off' line", text=text)
