"""Which RDMA devices and ports an ``NCCL_IB_HCA`` value selects, exactly as NCCL decides.

Source: NVIDIA/nccl src/misc/utils.cc (``parseStringList``, ``matchIf``, ``matchPort``,
``matchIfList``) and the IB init in src/transport/net_ib (``ncclIbInit``), which does::

    searchNot = env[0] == '^';  if (searchNot) env++;
    searchExact = env[0] == '='; if (searchExact) env++;
    nUserIfs = parseStringList(env, userIfs, MAX_IB_DEVS);
    for each device d, for port in 1..phys_port_cnt:
        if (!(matchIfList(d->name, port, userIfs, nUserIfs, searchExact) ^ searchNot)) skip;

Consequences kept here on purpose: unset or empty selects everything; ``^`` alone selects
nothing (an empty list matches everything, then the ``^`` inverts it); ``parseStringList``
drops one more leading ``^`` or ``=``, so ``==x`` is ``=x``; only the first 32 entries count
(MAX_IB_DEVS); ``name:`` gives port 0, which matches no real port; matching is case-sensitive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_IB_DEVS = 32


@dataclass(frozen=True, slots=True)
class HcaEntry:
    prefix: str
    port: int | None


@dataclass(frozen=True, slots=True)
class HcaSpec:
    raw: str | None
    exclude: bool
    exact: bool
    entries: tuple[HcaEntry, ...]


@dataclass(frozen=True, slots=True)
class HcaSelection:
    device: str
    port: int


def _atoi(text: str) -> int:
    """C ``atoi``: leading whitespace, an optional sign, then digits; 0 when there are none."""
    i = 0
    while i < len(text) and text[i] in " \t\n\v\f\r":
        i += 1
    sign = 1
    if i < len(text) and text[i] in "+-":
        sign = -1 if text[i] == "-" else 1
        i += 1
    start = i
    while i < len(text) and "0" <= text[i] <= "9" and i - start < 18:
        i += 1
    return sign * int(text[start:i]) if i > start else 0


def _parse_string_list(text: str) -> tuple[HcaEntry, ...]:
    if text[:1] in ("^", "="):
        text = text[1:]
    entries: list[HcaEntry] = []
    current = ""
    i = 0
    while i <= len(text) and len(entries) < MAX_IB_DEVS:
        c = text[i] if i < len(text) else ""
        if c == ":":
            if current:
                entries.append(HcaEntry(current, _atoi(text[i + 1 :])))
                current = ""
            while i < len(text) and text[i] != ",":
                i += 1
        elif c in (",", ""):
            if current:
                entries.append(HcaEntry(current, None))
                current = ""
        else:
            current += c
        i += 1
    return tuple(entries)


def parse_hca_spec(spec: str | None) -> HcaSpec:
    if spec is None:
        return HcaSpec(None, exclude=False, exact=False, entries=())
    # A C string ends at the first NUL.
    text = spec.split("\0", 1)[0]
    exclude = text.startswith("^")
    if exclude:
        text = text[1:]
    exact = text.startswith("=")
    if exact:
        text = text[1:]
    return HcaSpec(spec, exclude, exact, _parse_string_list(text))


def hca_matches(spec: HcaSpec, device: str, port: int) -> bool:
    if not spec.entries:
        listed = True
    else:
        listed = any(
            (device == e.prefix if spec.exact else device.startswith(e.prefix))
            # matchPort: -1 (no port given, or literally ":-1") matches any port.
            and (e.port is None or e.port == -1 or e.port == port)
            for e in spec.entries
        )
    return listed != spec.exclude


def select_hcas(
    spec: str | None, devices: Sequence[str], *, ports: Sequence[int] = (1,)
) -> tuple[HcaSelection, ...]:
    """The (device, port) pairs NCCL would use, in device order.

    ``ports`` are the port numbers every device has (a DGX Spark RoCE device has port 1 only).
    """
    parsed = parse_hca_spec(spec)
    return tuple(
        HcaSelection(device, port)
        for device in devices
        for port in ports
        if hca_matches(parsed, device, port)
    )
