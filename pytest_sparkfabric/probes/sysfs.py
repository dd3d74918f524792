"""Many small /proc and /sys files in one round trip, and what they mean: records `SFREAD<TAB>ok
<TAB>path<TAB>content` (continued on following lines) or `SFREAD<TAB>missing<TAB>path`; a missing
or unreadable file (an unused GID slot reads EINVAL) is missing, never a failed read."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import AddressValueError, IPv4Address, IPv6Address

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

_TAG = "SFREAD"
_LOOP = (
    'for f in {paths}; do if v=$(cat -- "$f" 2>/dev/null); then '
    "printf '" + _TAG + '\\tok\\t%s\\t%s\\n\' "$f" "$v"; else '
    "printf '" + _TAG + '\\tmissing\\t%s\\n\' "$f"; fi; done'
)


def build_read_files(paths: Sequence[str], *, expand: bool = False) -> shell.Command:
    """A POSIX sh loop that prints one record per path, quoted; with ``expand``, ``*`` expands
    (hwmon/*/temp*_input) and a pattern that matches nothing stays literal: one missing record."""
    for p in paths:
        if not p or any(c in p for c in "\t\n\0"):
            raise ValueError(f"unreadable path for a one-line record: {p!r}")
    if not paths:
        return shell.join(["true"])
    return shell.fill(_LOOP, {"paths": shell.words(shell.glob(p) if expand else p for p in paths)})


def parse_read_files(text: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    current: str | None = None
    for line in text.split("\n"):
        fields = line.split("\t", 3)
        if fields[0] == _TAG and len(fields) >= 3 and fields[1] in ("ok", "missing"):
            ok = fields[1] == "ok" and len(fields) == 4
            current = fields[2] if ok else None
            out[fields[2]] = fields[3] if ok else None
        elif current is not None:
            out[current] = f"{out[current]}\n{line}"
    return {path: v if v is None else v.rstrip("\n") for path, v in out.items()}


@dataclass(frozen=True, slots=True)
class FileReads:
    """What one :func:`build_read_files` run read: path -> content, None when missing."""

    files: Mapping[str, str | None]


def parse_read_files_checked(text: str) -> FileReads:
    """:func:`parse_read_files` for ``sparkfabric parse sysfs-read``: no record is an error."""
    if files := parse_read_files(text):
        return FileReads(files)
    raise ParseError(
        "sysfs read",
        f"expected '{_TAG}<TAB>ok|missing<TAB>path' records (the reader did not run)",
        found_text(text),
    )


def int_value(value: str | None) -> int | None:
    m = re.match(r"^\s*(-?\d{1,18})\b", value or "")
    return int(m.group(1)) if m else None


def sysctl_paths(netdev: str) -> dict[str, str]:
    """The ARP/rp_filter sysctls (``all`` and per interface) and disable_ipv6, by short name."""
    base = "/proc/sys/net/ipv4/conf"
    names = ("arp_ignore", "arp_announce", "rp_filter")
    out = {f"{dev}.{name}": f"{base}/{dev}/{name}" for name in names for dev in ("all", netdev)}
    return out | {"disable_ipv6": f"/proc/sys/net/ipv6/conf/{netdev}/disable_ipv6"}


@dataclass(frozen=True, slots=True)
class NetSysctls:
    netdev: str
    arp_ignore: int | None
    arp_announce: int | None
    rp_filter: int | None
    disable_ipv6: int | None


def net_sysctls(values: Mapping[str, str | None], netdev: str) -> NetSysctls:
    """The kernel uses max(conf.all.X, conf.IF.X) for arp_ignore, arp_announce, rp_filter."""
    got = {name: int_value(values.get(path)) for name, path in sysctl_paths(netdev).items()}
    ignore, announce, rp_filter = (
        max((v for v in (got[f"all.{n}"], got[f"{netdev}.{n}"]) if v is not None), default=None)
        for n in ("arp_ignore", "arp_announce", "rp_filter")
    )
    return NetSysctls(netdev, ignore, announce, rp_filter, got["disable_ipv6"])


@dataclass(frozen=True, slots=True)
class GidEntry:
    index: int
    gid: str
    type: str | None
    ndev: str | None
    ipv4: IPv4Address | None


def _port(device: str, port: int) -> str:
    return f"/sys/class/infiniband/{device}/ports/{port}"


def gid_paths(device: str, indices: Iterable[int] = range(16), port: int = 1) -> list[str]:
    base = _port(device, port)
    kinds = ("gids", "gid_attrs/types", "gid_attrs/ndevs")
    return [f"{base}/{kind}/{i}" for i in indices for kind in kinds]


def gid_table(values: Mapping[str, str | None], device: str, port: int = 1) -> tuple[GidEntry, ...]:
    """Populated GIDs (the all-zero GID marks an empty slot), by index."""
    base = _port(device, port)
    out: list[GidEntry] = []
    for path, raw in values.items():
        tail = path.removeprefix(f"{base}/gids/")
        if tail == path or raw is None or not re.fullmatch(r"\d{1,9}", tail):
            continue
        try:
            address = IPv6Address(raw.strip())
        except (AddressValueError, ValueError):
            continue
        if address.packed != bytes(16):
            attrs = [values.get(f"{base}/gid_attrs/{a}/{tail}") for a in ("types", "ndevs")]
            kind, ndev = (a.strip() if a else None for a in attrs)
            out.append(GidEntry(int(tail), raw.strip(), kind, ndev, address.ipv4_mapped))
    return tuple(sorted(out, key=lambda e: e.index))


def find_rocev2_gid(entries: Iterable[GidEntry], netdev: str, ipv4: IPv4Address) -> GidEntry | None:
    """The RoCE v2 GID carrying this netdev's IPv4 address: the index may differ per rail."""
    want = ("RoCE v2", netdev, ipv4)
    return next((e for e in entries if (e.type, e.ndev, e.ipv4) == want), None)


@dataclass(frozen=True, slots=True)
class PortState:
    code: int | None
    name: str | None


def port_state(value: str | None) -> PortState:
    """``4: ACTIVE`` (state) or ``5: LinkUp`` (phys_state)."""
    if m := re.match(r"^\s*(\d{1,3})\s*:\s*(\S.*?)\s*$", value or ""):
        return PortState(int(m.group(1)), m.group(2))
    return PortState(None, (value or "").strip() or None)


def ib_port_paths(device: str, port: int = 1) -> dict[str, str]:
    return {n: f"{_port(device, port)}/{n}" for n in ("state", "phys_state")}


def pcie_paths(bdf: str) -> dict[str, str]:
    names = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")
    return {n: f"/sys/bus/pci/devices/{bdf}/{n}" for n in names}


def link_speed_gt_s(value: str | None) -> float | None:
    """``32.0 GT/s PCIe`` -> 32.0 (older kernels print ``32 GT/s``)."""
    m = re.match(r"^\s*(\d{1,4}(?:\.\d{1,4})?)\s*GT/s", value or "")
    return float(m.group(1)) if m else None


def hwmon_glob(netdev: str) -> str:
    """Every ``temp*`` file of the NIC's hwmon: inputs and each sensor's own limits."""
    return f"/sys/class/net/{netdev}/device/hwmon/hwmon*/temp*"


def hwmon_temps_c(values: Mapping[str, str | None], *kinds: str) -> dict[str, float]:
    """``temp*_input`` files (milli-degrees Celsius) by path, in degrees; with ``kinds``, those
    files of each sensor by its ``temp*_input`` path instead, a later kind winning (``"max",
    "crit"``: its own limit, as the kernel's Documentation/hwmon/sysfs-interface.rst names it)."""
    out: dict[str, float] = {}
    for kind in kinds or ("input",):
        for path, raw in values.items():
            m = re.search(rf"^(.*/temp\d{{1,3}})_{kind}$", path)
            if m and (milli := int_value(raw)) is not None:
                out[m.group(1) + "_input"] = milli / 1000.0
    return out
