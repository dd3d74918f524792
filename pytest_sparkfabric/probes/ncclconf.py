"""NCCL configuration files and which source decides each variable.

Read exactly as NCCL reads them (NVIDIA/nccl src/misc/param.cc, ``setEnvFile`` and
``initEnvFunc``): a line whose first character is ``#`` is skipped; the key is everything
before the first ``=`` and the value everything after it, with no trimming at all; a line
without ``=`` is skipped. So ``NCCL_IB_HCA = x`` sets a variable named ``"NCCL_IB_HCA "``,
not NCCL_IB_HCA, and ``X=1 # note`` sets X to ``"1 # note"``: entries keep NCCL's exact
key and value and carry a ``note`` when the line probably does not do what it looks like.

Precedence: the process environment first; then ``$NCCL_CONF_FILE`` if the process
environment sets it non-empty, else ``~/.nccl.conf``; then ``/etc/nccl.conf``. A value that is
already set is never overwritten, by a later source or by a later line of the same file.
"""

from __future__ import annotations

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
