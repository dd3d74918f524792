"""NCCL's configuration as NCCL reads it: which source decides each variable, and which RDMA
devices (``NCCL_IB_HCA``) and interfaces (``NCCL_SOCKET_IFNAME``) the decided values select.

Files (NVIDIA/nccl src/misc/param.cc, ``setEnvFile`` and ``initEnvFunc``): a line whose first
character is ``#`` is skipped; the key is everything before the first ``=`` and the value
everything after it, with no trimming at all; a line without ``=`` is skipped. So ``NCCL_IB_HCA
= x`` sets a variable named ``"NCCL_IB_HCA "``, and ``X=1 # note`` sets X to ``"1 # note"``:
entries keep NCCL's exact key and value and carry a ``note`` when the line probably does not do
what it looks like. Precedence: the process environment first; then ``$NCCL_CONF_FILE`` if the
process environment sets it non-empty, else ``~/.nccl.conf``; then ``/etc/nccl.conf``. A value
already set is never overwritten, by a later source or by a later line of the same file.
"""

from __future__ import annotations

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
    """One place NCCL takes variables from.

    ``name`` is what a report shows (a file path, or ``"cluster.yaml nccl.env"``); ``kind``
    places it in NCCL's order.
    """

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
        return cls(name, kind, parse_nccl_conf(text))


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


def parse_nccl_conf(text: str) -> tuple[ConfEntry, ...]:
    entries: list[ConfEntry] = []
    for line_no, raw in enumerate(text.split("\n"), start=1):
        # param.cc setEnvFile drops the line end, CR included; nothing else is trimmed.
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        if not key:
            # NCCL would call setenv("") which fails; nothing is set.
            continue
        entries.append(ConfEntry(key, value, line_no, _note(key, value)))
    return tuple(entries)


def parse_nccl_conf_text(text: str) -> NcclConf:
    """Total: a file with no ``KEY=VALUE`` line is a valid, empty configuration."""
    return NcclConf(parse_nccl_conf(text))


def _ordered(sources: Sequence[EnvSource]) -> list[EnvSource]:
    process = [s for s in sources if s.kind == "process"]
    conf_file_set = any(e.key == "NCCL_CONF_FILE" and e.value for s in process for e in s.entries)
    middle_kind: SourceKind = "conf_file" if conf_file_set else "user_conf"
    middle = [s for s in sources if s.kind == middle_kind]
    system = [s for s in sources if s.kind == "system_conf"]
    return [*process, *middle, *system]


def effective_nccl_env(sources: Sequence[EnvSource]) -> dict[str, Decided]:
    """Decide every variable the way NCCL does; sources of one kind keep the given order.

    A ``conf_file`` source only counts when the process environment sets ``NCCL_CONF_FILE``
    non-empty; otherwise the ``user_conf`` (``~/.nccl.conf``) one does, as in NCCL.
    """
    decided: dict[str, Decided] = {}
    for source in _ordered(sources):
        for entry in source.entries:
            current = decided.get(entry.key)
            if current is None:
                decided[entry.key] = Decided(entry.key, entry.value, source.name, entry.line_no)
                continue
            lost = Shadowed(entry.value, source.name, entry.line_no)
            decided[entry.key] = Decided(
                current.key,
                current.value,
                current.source,
                current.line_no,
                (*current.shadowed, lost),
            )
    return decided


# -- NCCL_IB_HCA: the RDMA devices and ports a value selects, as the NCCL on the node does.
# Source: NVIDIA/nccl src/misc/utils.cc (``parseStringList``, ``matchIf``, ``matchPort``,
# ``matchIfList``) and the IB init (src/transport/net_ib.cc, net_ib/init.cc in 2.29+)::
#
#     searchNot = env[0] == '^';  if (searchNot) env++;
#     searchExact = env[0] == '='; if (searchExact) env++;
#     nUserIfs = parseStringList(env, userIfs, MAX_IB_DEVS);
#     keep (device, port) when matchIfList(name, port, userIfs, nUserIfs, searchExact) ^ searchNot
#
# The list grammar depends on the version (``Grammar``):
# - up to 2.4.8: only ``^``, skipped inside ``parseStringList``; no exact mode (``=`` is a name
#   character);
# - 2.5.6 to 2.30.4: ``^`` then ``=`` stripped once each (no second stripping: ``==x`` and
#   ``^^x`` keep the second character in the name); ``name:N`` is port ``atoi(N)``, so
#   ``name:`` is port 0, which no device has;
# - 2.30.7 on (commit 7ec092af): ``name[:port[:rail[:plane]]]``; an empty field means "any", so
#   ``name:`` takes every port; rail and plane only label the device.
# Always: unset or empty selects everything; ``^`` alone selects nothing; at most 32 entries
# (MAX_IB_DEVS); case-sensitive prefix match unless ``=``.

MAX_IB_DEVS = 32
Grammar = Literal["caret_only", "classic", "rail_plane"]
NcclVersion = tuple[int, int, int]
_VERSION = re.compile(r"(?:NCCL version |libnccl\.so\.)(\d+)\.(\d+)\.(\d+)")


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
class HcaEntry:
    prefix: str
    port: int | None


@dataclass(frozen=True, slots=True)
class HcaSpec:
    raw: str | None
    exclude: bool
    exact: bool
    entries: tuple[HcaEntry, ...]
    grammar: Grammar = "classic"


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


def _parse_fields(text: str) -> tuple[HcaEntry, ...]:
    """2.30.7+: strtok_r on ',' (empty entries vanish), strsep on ':'; empty port = any."""
    entries: list[HcaEntry] = []
    for item in text.split(","):
        name, *rest = item.split(":")
        if not name:
            continue
        port = _atoi(rest[0]) if rest and rest[0] else None
        entries.append(HcaEntry(name[:63], port))
        if len(entries) == MAX_IB_DEVS:
            break
    return tuple(entries)


def parse_hca_spec(spec: str | None, version: NcclVersion | None = None) -> HcaSpec:
    grammar = grammar_for(version)
    if spec is None:
        return HcaSpec(None, exclude=False, exact=False, entries=(), grammar=grammar)
    # A C string ends at the first NUL.
    text = spec.split("\0", 1)[0]
    exclude = text.startswith("^")
    if exclude:
        text = text[1:]
    exact = grammar != "caret_only" and text.startswith("=")
    if exact:
        text = text[1:]
    entries = _parse_fields(text) if grammar == "rail_plane" else _parse_string_list(text)
    return HcaSpec(spec, exclude, exact, entries, grammar)


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
    spec: str | None,
    devices: Sequence[str],
    *,
    ports: Sequence[int] = (1,),
    version: NcclVersion | None = None,
) -> tuple[HcaSelection, ...]:
    """The (device, port) pairs NCCL ``version`` would use, in device order.

    ``ports`` are the port numbers every device has (a DGX Spark RoCE device has port 1 only).
    """
    parsed = parse_hca_spec(spec, version)
    return tuple(
        HcaSelection(device, port)
        for device in devices
        for port in ports
        if hca_matches(parsed, device, port)
    )


# -- NCCL_SOCKET_IFNAME: the interfaces NCCL may use (bootstrap, Socket transport, the IB
# transport's out-of-band address). Source: NVIDIA/nccl v2.30.7-1 src/misc/socket.cc
# (``ncclFindInterfaces``) and src/os/linux.cc (the interface scan), with the list grammar of
# NCCL_IB_HCA's classic form: one leading ``^`` (exclude), then one ``=`` (exact); entries matched
# by prefix, any ``:port`` ignored; a value of one character or less counts as unset. Only
# running interfaces with an IPv4 or IPv6 address count. Unset, NCCL tries ``ib`` interfaces,
# then (skipping NCCL_COMM_ID's subnet search) all but ``docker``, ``lo`` and ``virbr``, then
# ``docker``, ``lo``, ``virbr`` in that order.

UNSET_ORDER = (("ib", False), ("docker,lo,virbr", True), ("docker", False), ("lo", False))
"""Unset: (prefix list, exclude) tried in order until one selects an interface."""


@dataclass(frozen=True, slots=True)
class Iface:
    name: str
    running: bool
    has_address: bool


def _match(names: Sequence[Iface], body: str, exclude: bool) -> list[str]:
    exact = body.startswith("=")
    if exact:
        body = body[1:]
    prefixes = [p.split(":")[0] for p in body.split(",") if p.split(":")[0]]

    def hit(name: str) -> bool:
        if not prefixes:
            return True
        return any(name == p if exact else name.startswith(p) for p in prefixes)

    return [i.name for i in names if i.running and i.has_address and hit(i.name) != exclude]


def select_socket_ifs(value: str | None, interfaces: Sequence[Iface]) -> list[str]:
    """The interfaces NCCL may pick, in the node's order (it takes the first)."""
    if value is None or len(value) <= 1:
        for body, exclude in UNSET_ORDER:
            found = _match(interfaces, body, exclude)
            if found:
                return found
        return _match(interfaces, "virbr", False)
    exclude = value.startswith("^")
    return _match(interfaces, value[1:] if exclude else value, exclude)
