"""Read and validate a cluster file and tell every problem at once, each with its line and fix:
the YAML (`source`), the shape (`spec`, worded by `wording`), then the rules (`validate`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from pytest_sparkfabric.cluster import validate, wording
from pytest_sparkfabric.cluster.argrules import seen
from pytest_sparkfabric.cluster.model import Cluster, build_nodes
from pytest_sparkfabric.cluster.source import (
    Located,
    Path_,
    Problem,
    TooComplex,
    format_path,
    load_located,
)
from pytest_sparkfabric.cluster.spec import ClusterSpec

MAX_CLUSTER_BYTES = 2**20
_START = "start from the output of `sparkfabric init --topology ... --nodes ...`"


class ConfigError(Exception):
    """Every problem of one cluster file; str() is the message a user reads. Never empty."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        unique: dict[tuple[Path_, str], Problem] = {}
        for p in problems:
            unique.setdefault((p.path, p.message), p)
        if not unique:
            unique[((), "")] = Problem((), None, "is not a valid cluster file", "")
        self.problems = sorted(
            unique.values(), key=lambda p: (p.line or 0, format_path(p.path), p.message)
        )
        n = len(self.problems)
        head = f"{source}: {n} problem{'s' if n != 1 else ''}"
        super().__init__("\n".join([head, *(p.render() for p in self.problems)]))


def _partial(data: dict[Any, Any], bad: set[str]) -> tuple[Cluster, set[str]]:
    """What of a file that failed validation is valid on its own (the fields without errors;
    defaults stand in for the others), as a Cluster for the rules that read only those."""
    fields = ClusterSpec.model_fields
    good: dict[str, Any] = {
        name: TypeAdapter[Any](info.rebuild_annotation()).validate_python(data[name])
        for name, info in fields.items()
        if name in data and name not in bad  # each validated as part of the whole
    }
    spec = ClusterSpec.model_construct(**good)
    nodes = build_nodes(spec) if "nodes" in good else ()
    return Cluster(spec=spec, source=None, nodes=nodes), set(fields) - bad


def parse_cluster(text: str, source: str = "cluster.yaml", path: Path | None = None) -> Cluster:
    """Validate cluster text completely; raise ConfigError listing every problem."""
    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if context := getattr(exc, "context", None):
            what = f"{context}, {what}"
        line, what = (mark.line + 1 if mark else None), f"the file is not valid YAML: {what}"
        raise ConfigError(source, [Problem((), line, what, "fix the YAML at that line")]) from None
    except TooComplex as exc:
        what = f"the file cannot be read: {exc}"
        raise ConfigError(source, [Problem((), None, what, _START)]) from None
    problems, data = list(located.problems), located.data
    if not isinstance(data, dict):
        what = "the top level must be a mapping of keys (topology:, nodes:, ...); got "
        what = "the file is empty" if data is None else what + seen(data)
        raise ConfigError(source, [*problems, Problem((), located.line_of(()), what, _START)])
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError as err:
        partial, valid = _partial(data, {str(e["loc"][0]) for e in err.errors() if e["loc"]})
        found = wording.problems(err, located) + validate.check(partial, valid)
        raise ConfigError(source, problems + _lined(found, located)) from None
    cluster = Cluster(spec=spec, source=path, nodes=build_nodes(spec), located=located)
    if problems := problems + _lined(validate.check(cluster), located):
        raise ConfigError(source, problems)
    return cluster


def _lined(found: list[Problem], located: Located) -> list[Problem]:
    return [p if p.line else replace(p, line=located.line_of(p.path)) for p in found]


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))  # fmt: skip
_TOO_BIG = "name the cluster.yaml file (is this the right path?)"


def _read_small_text(path: Path) -> str:
    """The text of a regular file of at most MAX_CLUSTER_BYTES. A FIFO would block the run
    forever and a device (/dev/zero) be read without end: both are refused by what fstat says
    before any byte is read; raise ConfigError's (what, fix) as a ValueError."""
    # O_NONBLOCK: opening a FIFO returns at once, so fstat can refuse it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "something else")
            if kind == "a directory":
                raise ValueError("the path is a directory, not a file", "name the file")
            raise ValueError(f"the path is {kind}, not a regular file", "name a cluster.yaml file")
        if st.st_size > MAX_CLUSTER_BYTES:
            raise ValueError(
                f"the file is {st.st_size} bytes; a cluster file is at most {MAX_CLUSTER_BYTES} "
                "bytes (1 MiB)",
                _TOO_BIG,
            )
        data = os.read(fd, MAX_CLUSTER_BYTES + 1)
        while len(data) <= MAX_CLUSTER_BYTES and (chunk := os.read(fd, 65536)):
            data += chunk
    finally:
        os.close(fd)
    if len(data) > MAX_CLUSTER_BYTES:
        raise ValueError(
            f"the file is larger than a cluster file's {MAX_CLUSTER_BYTES} bytes (1 MiB) at most",
            _TOO_BIG,
        )
    return data.decode("utf-8")


def load_cluster(path: str | Path) -> Cluster:
    """Read and validate a cluster file; raise ConfigError listing every problem."""
    p = Path(path)
    try:
        text = _read_small_text(p)
    except FileNotFoundError:
        what, fix = "the file does not exist", "check the path"
    except UnicodeDecodeError as exc:
        what, fix = f"the file is not UTF-8 text ({exc.reason})", "save it as UTF-8"
    except ValueError as exc:
        what, fix = exc.args
    except OSError as exc:
        what, fix = f"the file cannot be read: {exc.strerror or exc}", ""
    else:
        return parse_cluster(text, source=str(path), path=p.resolve())
    raise ConfigError(str(p), [Problem((), None, what, fix)]) from None
