"""The environment an NCCL process ends up with, read the way NCCL reads it.

From NVIDIA/nccl src/misc/param.cc (v2.30.7-1 L27-66), ``setEnvFile`` and ``initEnvFunc``:
the process environment comes first; then ``$NCCL_CONF_FILE`` when it is set and non-empty,
otherwise ``$HOME/.nccl.conf``; then ``/etc/nccl.conf``. Each file line has its ``\\n`` and then
one ``\\r`` removed; a line whose first character is ``#`` is skipped; the key is everything
before the first ``=`` (at most 1023 characters) and the value everything after (at most 1023);
a line without ``=`` is skipped; ``setenv(key, value, 0)`` never overwrites, so the first
source that names a variable wins. Nothing is trimmed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

_FIELD_MAX = 1023


def file_lines(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        if key:
            out.append((key[:_FIELD_MAX], value[:_FIELD_MAX]))
    return out


def resolve(
    process: Mapping[str, str], home: str, read: Callable[[str], str | None]
) -> dict[str, str]:
    """``read(path)`` gives a file's text, or None when fopen would fail."""
    env = dict(process)
    conf_file = process.get("NCCL_CONF_FILE")
    paths = [conf_file if conf_file else f"{home}/.nccl.conf", "/etc/nccl.conf"]
    for path in paths:
        text = read(path)
        if text is None:
            continue
        for key, value in file_lines(text):
            env.setdefault(key, value)
    return env
