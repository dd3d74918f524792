"""YAML loading that remembers where every value came from.

Validation errors must point at a line of the user's file, so we build plain Python data from
PyYAML's node graph ourselves and keep a path -> line index beside it. `wording.py` turns
pydantic's errors on that data into located sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

Path_ = tuple[str | int, ...]

MAX_VALUES = 50_000  # YAML aliases can expand a small file into a huge one ("billion laughs")


@dataclass(frozen=True)
class SourceProblem:
    path: Path_
    line: int | None
    message: str
    fix: str


class TooComplex(ValueError):
    """The document nests too deeply, refers to itself, or expands to too many values."""


@dataclass
class Located:
    """Data loaded from YAML plus the line (1-based) of each path in it."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)
    problems: list[SourceProblem] = field(default_factory=list)

    def line_of(self, path: Path_) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


def _key(value: Any) -> str | int:
    # Port numbers are written as bare ints (`0:`); everything else is a string key.
    if isinstance(value, bool) or not isinstance(value, int | str):
        return str(value)
    return value


def load_located(text: str) -> Located:
    """Parse YAML text; raise yaml.YAMLError for syntax errors (they carry a mark) and
    TooComplex for documents that cannot be a cluster file (self-reference, alias bombs, depth)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise TooComplex("the document nests too deeply") from None
    out = Located(data=None)
    if node is None:
        return out
    builder = _Builder(out)
    try:
        out.data = builder.build(node, ())
    except RecursionError:
        raise TooComplex("the document nests too deeply") from None
    return out


class _Builder:
    def __init__(self, out: Located) -> None:
        self.out = out
        self.ctor = yaml.SafeLoader("")
        self.count = 0
        self.active: set[int] = set()

    def build(self, node: yaml.Node, path: Path_) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            raise TooComplex(f"the document expands to more than {MAX_VALUES} values")
        if id(node) in self.active:
            raise TooComplex("a YAML alias refers to the value that contains it")
        out = self.out
        out.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            self.active.add(id(node))
            self.ctor.flatten_mapping(node)
            result: dict[str | int, Any] = {}
            first_line: dict[str | int, int] = {}
            for key_node, value_node in node.value:
                key = _key(self.ctor.construct_object(key_node, deep=True))
                child = (*path, key)
                line = key_node.start_mark.line + 1
                if key in result:
                    out.problems.append(
                        SourceProblem(
                            child,
                            line,
                            f"is given twice (first on line {first_line[key]})",
                            "keep one of them; YAML would silently use the last",
                        )
                    )
                first_line.setdefault(key, line)
                out.lines[child] = line
                result[key] = self.build(value_node, child)
            self.active.discard(id(node))
            return result
        if isinstance(node, yaml.SequenceNode):
            self.active.add(id(node))
            items = [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
            self.active.discard(id(node))
            return items
        return self.ctor.construct_object(node, deep=True)


def format_path(path: Path_) -> str:
    """`('nodes', 1, 'ports', 1, 0)` -> `nodes[1].ports.1[0]`."""
    text = ""
    for i, part in enumerate(path):
        # `ports` is the one mapping keyed by ints: its keys print as `.1`, list indexes as `[1]`.
        if isinstance(part, int) and text and not (i > 0 and path[i - 1] == "ports"):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text or "(top level)"
