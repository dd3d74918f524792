"""The preflight script (one per node: is everything the selected checks run there present?) and
the parser of what it prints: one tab-separated record per thing looked for (`build_preflight`
writes them), then `end` once the script ran to its end. A glob that matches nothing is echoed
with its `*`; lines of any other kind (a login banner, a tool's chatter) are ignored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

# perftest, Open MPI, NCCL: their Debian packages (nccl-tests built from source has none).
PACKAGES = ("perftest", "openmpi-bin", "libnccl2", "iperf3", "lldpd")


@dataclass(frozen=True, slots=True)
class Lookups:
    """What to look for on one node: command names or paths (`~/`: the login user's home),
    commands the run will start under `sudo -n` (word by word), sockets, library name -> the
    glob patterns where the loader would find it, Debian packages."""

    tools: Sequence[str] = ()
    sudo: Sequence[Sequence[str]] = ()
    sockets: Sequence[str] = ()
    libs: Mapping[str, Sequence[str]] = field(default_factory=dict)
    packages: Sequence[str] = PACKAGES


@dataclass(frozen=True, slots=True)
class SudoAnswer:
    allowed: bool
    said: str  # sudo's first line: the allowed command's path, or why it refused


@dataclass(frozen=True, slots=True)
class Found:
    """What one node has of what was looked for (a library: the files found, empty: none)."""

    tools: Mapping[str, str | None]
    sudo: Mapping[str, SudoAnswer]
    sockets: Mapping[str, bool]
    libs: Mapping[str, tuple[str, ...]]
    versions: Mapping[str, str]


def _record(kind: str, name: str, value: shell.Arg) -> str:
    return shell.join(["printf", r"%s\t%s\t%s\n", kind, name, value])


def build_preflight(look: Lookups) -> shell.Command:
    lines: list[str] = []
    for tool in look.tools:
        found = shell.Words(f'"$(command -v {shell.home_path(tool).text} 2>/dev/null)"')
        lines.append(_record("tool", tool, found))
    for words in look.sudo:
        text = " ".join(words)
        lines.append(f"out=$({shell.join(['sudo', '-n', '-l', *words])} 2>&1)")
        lines.append(shell.join(["printf", r"%s\t%s\t%s\t%s\n", "sudo", text]) + ' "$?" "$out"')
    for path in look.sockets:
        lines.append(
            f"if [ -S {shell.quote(path)} ]; then s=yes; else s=no; fi; "
            + _record("socket", path, shell.Words('"$s"'))
        )
    for lib, patterns in look.libs.items():
        globs = " ".join(shell.glob(p).text for p in patterns)
        # And the loader's cache (ld.so(8) looks there after LD_LIBRARY_PATH): `ldconfig -p`
        # lists `libnccl.so.2 (libc6,AArch64) => /usr/lib/.../libnccl.so.2`.
        cache = f"$(ldconfig -p 2>/dev/null | grep -F {shell.quote(lib)})"
        lines.append(_record("lib", lib, shell.Words(f'"$(echo {globs} {cache})"')))
    for package in look.packages:
        query = shell.join(["dpkg-query", "-W", "-f", "${Version}", package])
        lines.append(_record("version", package, shell.Words(f'"$({query} 2>/dev/null)"')))
    lines.append(shell.join(["echo", "end"]))
    return shell.Command("\n".join(lines))


def parse_preflight(text: str) -> Found:
    tools: dict[str, str | None] = {}
    sudo: dict[str, SudoAnswer] = {}
    sockets: dict[str, bool] = {}
    libs: dict[str, tuple[str, ...]] = {}
    versions: dict[str, str] = {}
    ended = False
    for line in text.replace("\r", "").split("\n"):
        kind, _, rest = line.partition("\t")
        name, _, value = rest.partition("\t")
        if kind == "end" or line.strip() == "end":
            ended = True
        elif not name:
            continue
        elif kind == "tool":
            tools[name] = value.strip() or None
        elif kind == "sudo":
            rc, _, said = value.partition("\t")
            sudo[name] = SudoAnswer(rc.strip() == "0", said.strip())
        elif kind == "socket":
            sockets[name] = value.strip() == "yes"
        elif kind == "lib":
            libs[name] = tuple(w for w in value.split() if w.startswith("/") and "*" not in w)
        elif kind == "version" and value.strip():
            versions[name] = value.strip()
    if not ended:
        raise ParseError(
            "preflight",
            "no closing 'end' line: the script stopped early (killed, or the shell failed)",
            found_text(text, last=True),
        )
    return Found(tools, sudo, sockets, libs, versions)
