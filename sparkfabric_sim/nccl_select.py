"""Which RoCE devices NCCL's IB transport takes for an ``NCCL_IB_HCA`` value, by NCCL version.

Written from NVIDIA/nccl itself, never from the product's matcher (issue 14):
- the IB init (``src/transport/net_ib.cc`` up to 2.28, ``src/transport/net_ib/init.cc`` in
  2.29+, v2.30.7-1 L317-324) strips one leading ``^`` (exclude) and then one leading ``=``
  (exact) and calls ``parseStringList``; per device and active port it keeps
  ``matchIfList(name, port, list, n, exact) ^ searchNot`` (L370);
- ``parseStringList`` (``src/misc/utils.cc``) exists in three shapes:
  * v2.4.8-1 and older: skips a leading ``^`` itself; no exact mode at all (``=`` is part of
    the name), prefix match only;
  * v2.5.6-1 .. v2.30.4-1: a char loop; ``name:`` takes ``atoi`` of the rest as the port and
    skips to the next comma (so ``dev:`` is port 0, which no device has); empty names dropped;
  * v2.30.7-1 on (commit 7ec092af): ``strtok_r`` on ``,`` and ``strsep`` on ``:`` into
    ``name[:port[:rail[:plane]]]``; an empty or absent field is -1 (any port); the name is cut
    to 63 characters (``char prefix[64]`` with ``snprintf``);
- ``matchIf``: ``strncmp`` over the entry's length (prefix), or including the NUL (exact);
  ``matchPort``: -1 on either side matches; an empty list matches every device;
- at most ``MAX_IB_DEVS`` = 32 entries are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Grammar = Literal["caret_only", "classic", "rail_plane"]
# The build NVIDIA's spark_cluster_setup.py compiles (dgx-spark-playbooks 0db7c141).
DEFAULT_VERSION = "2.28.9"
# Where Ubuntu's libnccl2 package puts the library on arm64 (one file per full version).
LIBRARY_DIR = "/usr/lib/aarch64-linux-gnu"
MAX_IB_DEVS = 32
_NAME_MAX = 63
_CLASSIC_FROM = (2, 5, 6)
_RAIL_PLANE_FROM = (2, 30, 7)


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    port: int  # -1 = any port
    rail: int = -1
    plane: int = -1


def grammar_of(version: tuple[int, int, int]) -> Grammar:
    if version >= _RAIL_PLANE_FROM:
        return "rail_plane"
    if version >= _CLASSIC_FROM:
        return "classic"
    return "caret_only"


def configured(chosen: str | None) -> str:
    """``X.Y.Z+cudaA.B`` as ``NCCL version`` prints it, from `simulate.nccl_version`."""
    text = chosen or DEFAULT_VERSION
    return text if "+" in text else f"{text}+cuda13.0"


def library_path(chosen: str | None) -> str:
    return f"{LIBRARY_DIR}/libnccl.so.{configured(chosen).split('+', 1)[0]}"


def parse_version(text: str) -> tuple[int, int, int]:
    """``2.28.9`` or ``2.28.9+cuda13.0`` (the ``NCCL version`` line of src/init.cc)."""
    core = text.split("+", 1)[0].split("-", 1)[0]
    major, minor, patch = (int(p) for p in core.split(".")[:3])
    return major, minor, patch


def _atoi(text: str) -> int:
    # C atoi: optional whitespace and sign, then digits; 0 when there are none.
    stripped = text.lstrip(" \t\n\v\f\r")
    sign = -1 if stripped[:1] == "-" else 1
    body = stripped[1:] if stripped[:1] in "+-" else stripped
    digits = ""
    for ch in body:
        if not ch.isdigit():
            break
        digits += ch
    return sign * int(digits) if digits else 0


def _char_loop(text: str) -> list[Entry]:
    entries: list[Entry] = []
    name = ""
    i = 0
    while len(entries) < MAX_IB_DEVS:
        c = text[i] if i < len(text) else ""
        if c == ":":
            if name:
                entries.append(Entry(name, _atoi(text[i + 1 :])))
                name = ""
            while i < len(text) and text[i] != ",":
                i += 1
            c = text[i] if i < len(text) else ""
        elif c in (",", ""):
            if name:
                entries.append(Entry(name, -1))
                name = ""
        else:
            name += c
        i += 1
        if c == "":
            break
    return entries


def _field(fields: list[str], i: int) -> int:
    return _atoi(fields[i]) if i < len(fields) and fields[i] else -1


def _tokens(text: str) -> list[Entry]:
    entries: list[Entry] = []
    for token in (t for t in text.split(",") if t):
        if len(entries) >= MAX_IB_DEVS:
            break
        fields = token.split(":")
        if fields[0]:
            entries.append(
                Entry(
                    fields[0][:_NAME_MAX], _field(fields, 1), _field(fields, 2), _field(fields, 3)
                )
            )
    return entries


@dataclass(frozen=True, slots=True)
class HcaFilter:
    exclude: bool
    exact: bool
    entries: tuple[Entry, ...]

    def keeps(self, device: str, port: int) -> bool:
        listed = not self.entries or any(
            (device == e.name if self.exact else device.startswith(e.name))
            and (e.port == -1 or e.port == port)
            for e in self.entries
        )
        return listed != self.exclude

    def label(self, device: str, port: int) -> Entry | None:
        """The entry that matched (its rail/plane label the device in 2.30.7+)."""
        for e in self.entries:
            name_ok = device == e.name if self.exact else device.startswith(e.name)
            if name_ok and (e.port == -1 or e.port == port):
                return e
        return None


def hca_filter(value: str | None, version: tuple[int, int, int]) -> HcaFilter:
    if value is None:
        return HcaFilter(False, False, ())
    text = value.split("\0", 1)[0]
    exclude = text.startswith("^")
    grammar = grammar_of(version)
    if grammar == "caret_only":
        # v2.4.8 net_ib.cc L109: searchNot read here, the '^' skipped inside parseStringList.
        return HcaFilter(exclude, False, tuple(_char_loop(text[1:] if exclude else text)))
    text = text[1:] if exclude else text
    exact = text.startswith("=")
    text = text[1:] if exact else text
    entries = _char_loop(text) if grammar == "classic" else _tokens(text)
    return HcaFilter(exclude, exact, tuple(entries))


def select(
    value: str | None, devices: Sequence[str], version: tuple[int, int, int], port: int = 1
) -> list[str]:
    """The devices (each with one active port, as on a DGX Spark) NCCL's IB transport keeps."""
    f = hca_filter(value, version)
    return [d for d in devices if f.keeps(d, port)]
