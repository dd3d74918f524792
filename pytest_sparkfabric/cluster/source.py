"""YAML that remembers the line of every value (messages point at the user's file), and the
Problem a line of it has; keys given twice are problems of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

Path_ = tuple[str | int, ...]

MAX_VALUES = 50_000  # YAML aliases can expand a small file into a huge one ("billion laughs")


def format_path(path: Path_) -> str:
    """`('nodes', 1, 'ports', 1, 0)` -> `nodes[1].ports.1[0]`: port numbers key mappings
    (`ports`, `link_speed`) and print as `.1`, list indexes as `[1]`."""
    text = ""
    for i, part in enumerate(path):
        if isinstance(part, int) and text and path[i - 1] not in ("ports", "link_speed"):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text or "(top level)"


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
        fix = f"\n    Fix: {_sentence(self.fix)}" if self.fix else ""
        return f"  {where}{_sentence(text)}{fix}"


class TooComplex(ValueError):
    """The document nests too deeply, refers to itself, or expands to too many values."""


@dataclass
class Located:
    """Data loaded from YAML plus the line (1-based) of each path in it, and the text itself."""

    data: Any
    text: str = ""
    lines: dict[Path_, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def line_of(self, path: Path_) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        lines = (self.lines.get(tuple(path[:end])) for end in range(len(path), -1, -1))
        return next((line for line in lines if line is not None), None)


def load_located(text: str) -> Located:
    """Parse YAML text; raise yaml.YAMLError for syntax errors (they carry a mark) and
    TooComplex for documents that cannot be a cluster file (self-reference, alias bombs, depth)."""
    out, ctor, active, count = Located(None, text), yaml.SafeLoader(""), set[int](), [0]

    def build(node: yaml.Node, path: Path_) -> Any:
        count[0] += 1
        if count[0] > MAX_VALUES:
            raise TooComplex(f"the document expands to more than {MAX_VALUES} values")
        if id(node) in active:
            raise TooComplex("a YAML alias refers to the value that contains it")
        out.lines.setdefault(path, node.start_mark.line + 1)
        if not isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            return ctor.construct_object(node, deep=True)
        active.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            result: Any = [build(item, (*path, i)) for i, item in enumerate(node.value)]
        else:
            ctor.flatten_mapping(node)
            result, first = {}, dict[str | int, int]()
            for key_node, value_node in node.value:
                key = ctor.construct_object(key_node, deep=True)
                # Port numbers are written as bare ints (`0:`); any other key reads as text.
                key = key if isinstance(key, int | str) and not isinstance(key, bool) else str(key)
                out.lines[(*path, key)] = line = key_node.start_mark.line + 1
                if key in first:
                    what = f"is given twice (first on line {first[key]})"
                    fix = "keep one of them; YAML would silently use the last"
                    out.problems.append(Problem((*path, key), line, what, fix))
                first.setdefault(key, line)
                result[key] = build(value_node, (*path, key))
        active.discard(id(node))
        return result

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        out.data = None if node is None else build(node, ())
    except RecursionError:
        raise TooComplex("the document nests too deeply") from None
    return out
