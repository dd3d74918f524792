"""NCCL's configuration as NCCL reads it: which source decides each variable, and which RDMA
devices (``NCCL_IB_HCA``) and interfaces (``NCCL_SOCKET_IFNAME``) the decided values select.

Files (NVIDIA/nccl src/misc/param.cc, ``setEnvFile``): a line whose first character is ``#`` is
skipped; the key is everything before the first ``=``, the value everything after it, with no
trimming at all (``NCCL_IB_HCA = x`` sets ``"NCCL_IB_HCA "``, ``X=1 # note`` sets ``"1 # note"``:
such entries carry a ``note``). Precedence: the process environment; then ``$NCCL_CONF_FILE``
if the environment sets it non-empty, else ``~/.nccl.conf``; then ``/etc/nccl.conf``. A value
already set is never overwritten, by a later source or a later line of the same file."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

SourceKind = Literal["process", "conf_file", "user_conf", "system_conf"]


@dataclass(frozen=True, slots=True)
class ConfEntry:
    key: str
    value: str
    line_no: int | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class EnvSource:
    """One place NCCL takes variables from: ``name`` is what a report shows (a file path, or
    ``"cluster.yaml nccl.env"``), ``kind`` places it in NCCL's order."""

    name: str
    kind: SourceKind
    entries: tuple[ConfEntry, ...]

    @classmethod
    def from_mapping(
        cls, name: str, env: Mapping[str, str], kind: SourceKind = "process"
    ) -> EnvSource:
        return cls(name, kind, tuple(ConfEntry(k, v, None) for k, v in env.items()))

    @classmethod
    def from_text(cls, name: str, text: str, kind: SourceKind) -> EnvSource:
        return cls(name, kind, parse_nccl_conf_text(text).entries)


@dataclass(frozen=True, slots=True)
class Shadowed:
    value: str
    source: str
    line_no: int | None


@dataclass(frozen=True, slots=True)
class Decided:
    """The value NCCL will use, and where it came from (file and line, or the environment)."""

    key: str
    value: str
    source: str
    line_no: int | None
    shadowed: tuple[Shadowed, ...] = ()

    @property
    def where(self) -> str:
        return self.source if self.line_no is None else f"{self.source} line {self.line_no}"


def _note(key: str, value: str) -> str | None:
    if key != key.strip():
        return f"key {key!r} has surrounding whitespace: NCCL sets a variable of that exact name"
    if key.lstrip().startswith("#"):
        return "only a '#' in the first column starts a comment: NCCL sets this as a variable"
    if value.endswith("\r"):
        return "the value ends with a carriage return (CRLF file): NCCL keeps it"
    if value != value.strip():
        return f"value {value!r} has surrounding whitespace: NCCL keeps it"
    if " #" in value or "\t#" in value:
        return "NCCL has no inline comments: the text after '#' is part of the value"
    return None


@dataclass(frozen=True, slots=True)
class NcclConf:
    """The entries of one nccl.conf, in file order (what ``sparkfabric parse nccl-conf`` shows)."""

    entries: tuple[ConfEntry, ...]


def parse_nccl_conf_text(text: str) -> NcclConf:
    """Total: a file with no ``KEY=VALUE`` line is a valid, empty configuration."""
    entries: list[ConfEntry] = []
    for line_no, raw in enumerate(text.split("\n"), start=1):
        # setEnvFile drops the line end, CR included; nothing else is trimmed.
        key, eq, value = raw.removesuffix("\r").partition("=")
        # An empty key: NCCL's setenv("") fails and nothing is set.
        if eq and key and not key.startswith("#"):
            entries.append(ConfEntry(key, value, line_no, _note(key, value)))
    return NcclConf(tuple(entries))


def effective_nccl_env(sources: Sequence[EnvSource]) -> dict[str, Decided]:
    """Every variable decided the way NCCL does; sources of one kind keep the given order. A
    ``conf_file`` source counts only when the process environment sets ``NCCL_CONF_FILE``
    non-empty; otherwise the ``user_conf`` (``~/.nccl.conf``) one does, as in NCCL."""
    process = [s for s in sources if s.kind == "process"]
    conf_file = any(e.key == "NCCL_CONF_FILE" and e.value for s in process for e in s.entries)
    kinds = ("process", "conf_file" if conf_file else "user_conf", "system_conf")
    decided: dict[str, Decided] = {}
    for source in [s for kind in kinds for s in sources if s.kind == kind]:
        for e in source.entries:
            if (current := decided.get(e.key)) is None:
                decided[e.key] = Decided(e.key, e.value, source.name, e.line_no)
            else:
                lost = (*current.shadowed, Shadowed(e.value, source.name, e.line_no))
                decided[e.key] = dataclasses.replace(current, shadowed=lost)
    return decided


# -- NCCL_IB_HCA, as the NCCL on the node reads it (src/misc/utils.cc ``parseStringList``,
# ``matchIfList``; the IB init strips one ``^`` (exclude), then one ``=`` (exact), so ``==x`` and
# ``^^x`` keep the second character in the name). The list grammar depends on the version: up
# to 2.4.8 only ``^`` (``=`` is a name character); 2.5.6 to 2.30.4 ``name:N`` is port
# ``atoi(N)`` (``name:`` is port 0, which no device has); 2.30.7 on (commit 7ec092af)
# ``name[:port[:rail[:plane]]]`` with an empty field meaning "any". Always: unset or empty
# selects everything, ``^`` alone nothing; at most 32 entries; case-sensitive prefix match.

MAX_IB_DEVS = 32
Grammar = Literal["caret_only", "classic", "rail_plane"]
NcclVersion = tuple[int, int, int]
_VERSION = re.compile(r"(?:NCCL version |libnccl\.so\.)(\d+)\.(\d+)\.(\d+)")
_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?\d{1,18})")


def grammar_for(version: NcclVersion | None) -> Grammar:
    """``classic`` when the version is unknown (every release from 2019 to April 2026)."""
    if version is None or (2, 5, 6) <= version < (2, 30, 7):
        return "classic"
    return "rail_plane" if version >= (2, 30, 7) else "caret_only"


def find_nccl_version(text: str) -> NcclVersion | None:
    """The first ``NCCL version X.Y.Z`` (INFO log) or ``libnccl.so.X.Y.Z`` (library) in text."""
    m = _VERSION.search(text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


@dataclass(frozen=True, slots=True)
class HcaSelection:
    device: str
    port: int


def _hca_entries(text: str, grammar: Grammar) -> list[tuple[str, int | None]]:
    """(prefix, port) per list entry; port None: any. C ``atoi`` reads the port (0 without
    digits); 2.30.7+ truncates names to 63 characters and reads an empty port as any."""
    entries: list[tuple[str, int | None]] = []
    for item in text.split(","):
        name, colon, rest = item.partition(":")
        port = rest.partition(":")[0] if grammar == "rail_plane" else rest
        m = _ATOI.match(port)
        if name and len(entries) < MAX_IB_DEVS:
            any_port = not colon or (grammar == "rail_plane" and not port)
            name = name[:63] if grammar == "rail_plane" else name
            entries.append((name, None if any_port else int(m[1]) if m else 0))
    return entries


def select_hcas(
    spec: str | None,
    devices: Sequence[str],
    *,
    ports: Sequence[int] = (1,),
    version: NcclVersion | None = None,
) -> tuple[HcaSelection, ...]:
    """The (device, port) pairs NCCL ``version`` would use, in device order; ``ports`` are the
    port numbers every device has (a DGX Spark RoCE device has port 1 only)."""
    grammar = grammar_for(version)
    text = (spec or "").split("\0", 1)[0]  # a C string ends at the first NUL
    exclude = text.startswith("^")
    text = text[1:] if exclude else text
    exact = grammar != "caret_only" and text.startswith("=")
    entries = _hca_entries(text[1:] if exact else text, grammar)

    def listed(device: str, port: int) -> bool:
        # matchPort: -1 (no port given, or literally ":-1") matches any port.
        return not entries or any(
            (device == p if exact else device.startswith(p)) and e in (None, -1, port)
            for p, e in entries
        )

    return tuple(HcaSelection(d, p) for d in devices for p in ports if listed(d, p) != exclude)


# -- NCCL_SOCKET_IFNAME (NVIDIA/nccl v2.30.7-1 src/misc/socket.cc ``ncclFindInterfaces``): one
# ``^`` then one ``=``, prefixes, any ``:port`` ignored; a value of one character or less counts
# as unset. Only running interfaces with an address count. Unset: ``ib``, then all but
# ``docker``, ``lo`` and ``virbr`` (skipping NCCL_COMM_ID's subnet search), then each of those.
UNSET_ORDER = (
    ("ib", False),
    ("docker,lo,virbr", True),
    ("docker", False),
    ("lo", False),
    ("virbr", False),
)
"""Unset: (prefix list, exclude) tried in order until one selects an interface."""


@dataclass(frozen=True, slots=True)
class Iface:
    name: str
    running: bool
    has_address: bool


def _match(names: Sequence[Iface], body: str, exclude: bool) -> list[str]:
    exact = body.startswith("=")
    prefixes = [p.split(":")[0] for p in body[exact:].split(",") if p.split(":")[0]]

    def hit(name: str) -> bool:
        return not prefixes or any(name == p if exact else name.startswith(p) for p in prefixes)

    return [i.name for i in names if i.running and i.has_address and hit(i.name) != exclude]


def select_socket_ifs(value: str | None, interfaces: Sequence[Iface]) -> list[str]:
    """The interfaces NCCL may pick, in the node's order (it takes the first)."""
    if value is None or len(value) <= 1:
        for body, exclude in UNSET_ORDER:
            if found := _match(interfaces, body, exclude):
                return found
        return []
    exclude = value.startswith("^")
    return _match(interfaces, value[exclude:], exclude)
