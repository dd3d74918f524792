"""RDMA port counters (`/sys/class/infiniband/<dev>/ports/<port>/hw_counters/*`), name -> int, an
absent one None (mlx5 counters.c: firmware decides), from SFREAD records, `grep .`, `name: value`,
iproute2 `rdma statistic show` (wrapped or `-p`) and ttar."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text
from pytest_sparkfabric.probes.sysfs import build_read_files, parse_read_files

_PATH = re.compile(r"/sys/class/infiniband/(?P<dev>[^/\s]+)/ports/(?P<port>\d{1,3})/hw_counters/")
_PATH_VALUE = re.compile(r"^(?P<path>\S*/hw_counters/(?P<name>\w+)):\s*(?P<value>-?\d{1,20})\s*$")
_NAME_VALUE = re.compile(r"^\s*(?P<name>[a-z][a-z0-9_]*):\s*(?P<value>-?\d{1,20})\s*$")
_PORT_HEAD = re.compile(r"^\s*Port\s+(\d{1,3})\s+hw counters:\s*$")
_LINK = re.compile(r"^\s*link\s+(?P<dev>[^/\s]+)/(?P<port>\d{1,3})\b(?P<rest>.*)$")
_TTAR_PATH = re.compile(r"^Path:\s*(?P<path>\S*/hw_counters/(?P<name>\w+))\s*$")
_WORD = re.compile(r"^[a-z][a-z0-9_]*$")
_NUMBER = re.compile(r"^-?\d{1,20}$")


@dataclass(frozen=True, slots=True)
class HwCounterSet:
    """The counters of one RDMA port (device and port None when the text does not say)."""

    device: str | None
    port: int | None
    counters: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HwCounters:
    ports: tuple[HwCounterSet, ...]


def build_hw_counters(devices: Sequence[str], port: int = 1) -> shell.Command:
    paths = [f"/sys/class/infiniband/{d}/ports/{port}/hw_counters/*" for d in devices]
    return build_read_files(paths, expand=True)


class _Collector(dict[tuple[str | None, int | None], dict[str, int]]):
    def add(self, device: str | None, port: int | None, name: str, value: int) -> None:
        self.setdefault((device, port), {}).setdefault(name, value)


def _where(path: str) -> tuple[str | None, int | None]:
    m = _PATH.search(path)
    return (m.group("dev"), int(m.group("port"))) if m else (None, None)


def _rdma_statistic(tokens: list[str], device: str, port: int, out: _Collector) -> None:
    """``name value`` pairs of one ``link`` record, whatever the line breaks were."""
    pairs = itertools.pairwise(tokens)
    for name, value in pairs:
        if _WORD.match(name) and _NUMBER.match(value):
            out.add(device, port, name, int(value))
            next(pairs, None)  # the value is not the next pair's name


def parse_hw_counters(text: str) -> HwCounters:
    out = _Collector()
    for path, value in parse_read_files(text).items() if "SFREAD\t" in text else ():
        if value is not None and "/hw_counters/" in path and _NUMBER.match(value.strip()):
            out.add(*_where(path), path.rsplit("/", 1)[-1], int(value.strip()))
    link: tuple[str, int] | None = None
    link_tokens: list[str] = []
    ttar_name: tuple[str, str | None, int | None] | None = None
    show_port: int | None = None
    for raw in text.splitlines():
        line = raw.lstrip("> ").rstrip() if raw.startswith(">") else raw.rstrip()
        if m := _LINK.match(line):
            if link is not None:
                _rdma_statistic(link_tokens, *link, out)
            link, link_tokens = (m.group("dev"), int(m.group("port"))), m.group("rest").split()
            continue
        if link is not None:
            words = line.replace("Optional-set:", " ").split()
            if words and all(_WORD.match(w) or _NUMBER.match(w) for w in words):
                link_tokens += words
                continue
            _rdma_statistic(link_tokens, *link, out)
            link, link_tokens = None, []
        if m := _TTAR_PATH.match(line):
            ttar_name = (m.group("name"), *_where(m.group("path")))
        elif ttar_name is not None and _NUMBER.match(line.strip()):
            name, device, port = ttar_name
            out.add(device, port, name, int(line.strip()))
            ttar_name = None
        elif m := _PATH_VALUE.match(line):
            out.add(*_where(m.group("path")), m.group("name"), int(m.group("value")))
        elif m := _PORT_HEAD.match(line):
            show_port = int(m.group(1))
        elif m := _NAME_VALUE.match(line):
            out.add(None, show_port, m.group("name"), int(m.group("value")))
    if link is not None:
        _rdma_statistic(link_tokens, *link, out)
    if not out:
        raise ParseError(
            "hw_counters",
            "expected hw_counters values: 'name: value', 'path:value', SFREAD records or "
            "'link DEV/PORT name value ...' (rdma statistic)",
            found_text(text),
        )
    return HwCounters(tuple(HwCounterSet(d, p, c) for (d, p), c in out.items()))
