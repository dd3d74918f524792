"""A rail's PFC and trust state as its host shows it: `mlnx_qos -i <netdev>` (mlnx-tools
`pretty_print`), read by words (pastes collapse blanks), no PFC table: `pfc_enabled` None, "not
shown", which is not "off"; where mlnx_qos is absent, iproute2 `dcb pfc show dev <netdev>` (man
dcb-pfc(8), iproute2 5.11+): PFC only, from its `prio-pfc 0:off ... 7:off` line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

Trust = Literal["pcp", "dscp", "none"]

_DCBX = re.compile(r"^DCBX mode:\s*(.+?)\s*$")
_TRUST = re.compile(r"^Priority trust state:\s*(\w+)")
_TRUST_NONE = "Priority trust state is not supported"
_TRUSTS: dict[str, Trust] = {"pcp": "pcp", "dscp": "dscp"}
_PRIO = re.compile(r"\b([0-7]):(on|off)\b")
_PFC_ROW = re.compile(r"^(priority|enabled|buffer)((?:\s+\d{1,9})+)\s*$")
# Lines that show the text is mlnx_qos's even without the fields read here.
_OTHER = re.compile(
    r"^(?:Receive buffer size \(bytes\):|tc:\s*\d{1,2}\s+ratelimit:\s*[^,]+?,\s*tsa:\s*\w)"
)


@dataclass(frozen=True, slots=True)
class MlnxQos:
    dcbx_mode: str | None
    trust: Trust | None
    pfc_enabled: tuple[bool, ...] | None

    _json_properties: ClassVar[tuple[str, ...]] = ("pfc_priorities",)

    @property
    def pfc_priorities(self) -> tuple[int, ...] | None:
        """The priorities with PFC on (empty: PFC off everywhere; None: not shown)."""
        if self.pfc_enabled is None:
            return None
        return tuple(i for i, on in enumerate(self.pfc_enabled) if on)


def build_mlnx_qos(netdev: str) -> shell.Command:
    return shell.join(["mlnx_qos", "-i", netdev])


def build_dcb_pfc(netdev: str) -> shell.Command:
    return shell.join(["dcb", "pfc", "show", "dev", netdev])


def parse_dcb_pfc(text: str) -> MlnxQos:
    for line in text.splitlines():
        flags = dict(_PRIO.findall(line)) if line.split()[:1] == ["prio-pfc"] else {}
        if len(flags) == 8:
            return MlnxQos(None, None, tuple(flags[str(p)] == "on" for p in range(8)))
    raise ParseError("dcb", "expected a 'prio-pfc 0:on|off ... 7:on|off' line", found_text(text))


def parse_mlnx_qos(text: str) -> MlnxQos:
    dcbx: str | None = None
    trust: Trust | None = None
    pfc: dict[str, tuple[int, ...]] = {}
    recognised = False
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if m := _DCBX.match(line):
            dcbx = m.group(1)
        elif line.startswith(_TRUST_NONE):
            trust = "none"
        elif m := _TRUST.match(line):
            trust = _TRUSTS.get(m.group(1).lower())
        elif m := _PFC_ROW.match(line):
            pfc.setdefault(m.group(1), tuple(int(t) for t in m.group(2).split()))
        elif not _OTHER.match(line):
            continue
        recognised = True
    if not recognised:
        raise ParseError(
            "mlnx_qos",
            "expected 'DCBX mode:', 'Priority trust state:', 'PFC configuration:' or 'tc:' lines",
            found_text(text),
        )
    enabled = pfc.get("enabled")
    return MlnxQos(dcbx, trust, tuple(v == 1 for v in enabled) if enabled is not None else None)
