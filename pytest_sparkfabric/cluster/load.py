"""cluster.yaml -> Cluster: read, validate completely, and tell every problem at once.

Every problem in a file is collected and reported together, each with its YAML line, its path
and a fix: the YAML itself (`source.py`), the shape (pydantic, `spec.py`, worded by
`wording.py`), then the cabling and address rules (`rules.py`), which run even on a broken
shape so one problem never hides another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from pytest_sparkfabric.cluster import argrules, rules
from pytest_sparkfabric.cluster.filefacts import RuleProblem
from pytest_sparkfabric.cluster.model import Cluster, build_nodes
from pytest_sparkfabric.cluster.schema_path import Shape
from pytest_sparkfabric.cluster.small_file import NotASmallFile, read_small_text
from pytest_sparkfabric.cluster.source import (
    Located,
    Path_,
    SourceProblem,
    TooComplex,
    format_path,
    load_located,
)
from pytest_sparkfabric.cluster.spec import ClusterSpec
from pytest_sparkfabric.cluster.wording import Hint, seen, validation_problems

# Words for messages where the schema alone says too little (see wording.validation_problems).
HINTS: dict[Shape, Hint] = {
    ("topology",): Hint(note="direct: 2 nodes, mesh: 3, ring: 4 or more, switch: 2 to 128"),
    ("mtu",): Hint(note="9000 for jumbo frames, 1500 is Ethernet's default"),
    ("nodes",): Hint(example="[{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}, ...]"),
    ("nodes", "*"): Hint(example="{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}"),
    ("nodes", "*", "name"): Hint(
        rule="a name starts with a letter or digit and holds only letters, digits, '.', '_', '-'"
    ),
    ("nodes", "*", "ports"): Hint(example="{1: [192.168.100.11/24, 192.168.101.11/24]}"),
    ("nodes", "*", "ports", "[key]"): Hint(
        rule="is not a QSFP port: a Spark has ports 0 and 1 (0 is the cage nearest the RJ45 port)"
    ),
    ("nodes", "*", "ports", "*"): Hint(
        example="[192.168.100.11/24, 192.168.101.11/24]",
        rule="rail addresses",
        note="one for each rail: the port's two PCIe halves",
    ),
    ("nodes", "*", "ports", "*", "*"): Hint(example="192.168.100.11/24"),
    ("nodes", "*", "ports", "*", "*", "netdev"): Hint(rule=argrules.NETDEV.words),
    ("nodes", "*", "ports", "*", "*", "rdma"): Hint(rule=argrules.RDMA.words),
    ("nodes", "*", "ssh", "user"): Hint(rule=argrules.USER.words),
    ("switch", "user"): Hint(rule=argrules.USER.words),
    ("switch", "ports", "*"): Hint(rule=argrules.SWITCH_PORT.words),
    ("nccl", "binary"): Hint(rule=argrules.BINARY_WORDS),
    ("switch", "password_env"): Hint(
        rule="it must be the name of an environment variable (letters, digits, '_')"
    ),
    ("switch", "ports"): Hint(example="{spark-1: qsfp56-dd-1-1, spark-2: qsfp56-dd-1-5}"),
    ("nccl", "size"): Hint(rule="a size is a whole number with an optional K, M or G"),
    ("thresholds", "*"): Hint(example="90"),
    ("simulate", "faults"): Hint(example="[{fault: link_down, node: spark-1}]"),
    ("simulate", "faults", "*"): Hint(example="{fault: link_down, node: spark-1}"),
}


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a cluster file: where (path and line), what, and how to fix it.

    `message` continues the path as a sentence: path `topology`, message `'mesh' needs ...`."""

    path: Path_
    line: int | None
    message: str
    fix: str

    def render(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        text = f"{format_path(self.path)} {self.message}" if self.path else self.message
        out = f"  {where}{_sentence(text)}"
        return out + (f"\n    Fix: {_sentence(self.fix)}" if self.fix else "")


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
        super().__init__(self.render())

    def render(self) -> str:
        n = len(self.problems)
        head = f"{self.source}: {n} problem{'s' if n != 1 else ''}"
        return "\n".join([head, *(p.render() for p in self.problems)])


_START = "start from the output of `sparkfabric init --topology ... --nodes ...`"


def parse_cluster(text: str, source: str = "cluster.yaml", path: Path | None = None) -> Cluster:
    """Validate cluster text completely; raise ConfigError listing every problem."""
    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        what = f"{context}, {what}" if context else what
        raise ConfigError(
            source,
            [Problem((), line, f"the file is not valid YAML: {what}", "fix the YAML at that line")],
        ) from None
    except TooComplex as exc:
        raise ConfigError(
            source, [Problem((), None, f"the file cannot be read: {exc}", _START)]
        ) from None
    problems = [_from_source(p) for p in located.problems]
    data = located.data
    if data is None:
        problems.append(Problem((), None, "the file is empty", _START))
        raise ConfigError(source, problems)
    if not isinstance(data, dict):
        problems.append(
            Problem(
                (),
                located.line_of(()),
                "the top level must be a mapping of keys (topology:, nodes:, ...); "
                f"got {seen(data)}",
                _START,
            )
        )
        raise ConfigError(source, problems)
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError as err:
        problems += [_from_source(p) for p in validation_problems(err, located, ClusterSpec, HINTS)]
        # The rules that need no valid shape still run, so one problem never hides another.
        problems += _located(rules.check_data(data), located)
        raise ConfigError(source, problems) from None
    cluster = Cluster(spec=spec, source=path, nodes=build_nodes(spec), located=located)
    problems += _located(rules.check(cluster), located)
    if problems:
        raise ConfigError(source, problems)
    return cluster


def _located(found: list[RuleProblem], located: Located) -> list[Problem]:
    return [Problem(p.path, located.line_of(p.path), p.message, p.fix) for p in found]


def _from_source(p: SourceProblem) -> Problem:
    return Problem(p.path, p.line, p.message, p.fix)


def load_cluster(path: str | Path) -> Cluster:
    """Read and validate a cluster file; raise ConfigError listing every problem."""
    p = Path(path)
    try:
        text = read_small_text(p)
    except NotASmallFile as exc:
        raise ConfigError(str(p), [Problem((), None, exc.what, exc.fix)]) from None
    except FileNotFoundError:
        raise ConfigError(
            str(p), [Problem((), None, "the file does not exist", "check the path")]
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            str(p),
            [Problem((), None, f"the file is not UTF-8 text ({exc.reason})", "save it as UTF-8")],
        ) from None
    except OSError as exc:
        raise ConfigError(
            str(p), [Problem((), None, f"the file cannot be read: {exc.strerror or exc}", "")]
        ) from None
    return parse_cluster(text, source=str(path), path=p.resolve())
