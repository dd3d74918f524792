"""Read and validate a cluster file and tell every problem at once, each with its line and fix:
the YAML (`source`), the shape (`spec`; pydantic's errors worded here), then the rules (`validate`).
"""

from __future__ import annotations

import datetime
import difflib
import os
import stat
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from pydantic import TypeAdapter, ValidationError

from pytest_sparkfabric.cluster import validate
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

MAX_BYTES = 2**20
_START = "start from the output of `sparkfabric init --topology ... --nodes ...`"


class ConfigError(Exception):
    """Every problem of one cluster file; str() is the message a user reads. Never empty."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        unique = {(p.path, p.message): p for p in reversed(problems)}  # the first of each stays
        told = unique.values() or [Problem((), None, "is not a valid cluster file", "")]
        self.problems = sorted(told, key=lambda p: (p.line or 0, format_path(p.path), p.message))
        n = len(self.problems)
        head = f"{source}: {n} problem{'s' if n != 1 else ''}"
        super().__init__("\n".join([head, *(p.render() for p in self.problems)]))


def parse_cluster(text: str, source: str = "cluster.yaml", path: Path | None = None) -> Cluster:
    """Validate cluster text completely; raise ConfigError listing every problem."""
    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        mark, context = getattr(exc, "problem_mark", None), getattr(exc, "context", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        what = f"the file is not valid YAML: {context + ', ' if context else ''}{what}"
        problem = Problem((), mark.line + 1 if mark else None, what, "fix the YAML at that line")
        raise ConfigError(source, [problem]) from None
    except TooComplex as exc:
        problem = Problem((), None, f"the file cannot be read: {exc}", _START)
        raise ConfigError(source, [problem]) from None
    problems, data = located.problems, located.data
    if not isinstance(data, dict):
        what = "the top level must be a mapping of keys (topology:, nodes:, ...); got "
        what = "the file is empty" if data is None else what + seen(data)
        raise ConfigError(source, [*problems, Problem((), located.line_of(()), what, _START)])
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError as err:
        # The rules that read only fields without errors still run, on those fields alone.
        bad = {str(e["loc"][0]) for e in err.errors() if e["loc"]}
        fields = ClusterSpec.model_fields
        good = {
            name: TypeAdapter[Any](info.rebuild_annotation()).validate_python(data[name])
            for name, info in fields.items()
            if name in data and name not in bad
        }
        part = ClusterSpec.model_construct(**good)
        partial = Cluster(part, None, build_nodes(part) if "nodes" in good else ())
        found = _worded(err, located) + validate.check(partial, set(fields) - bad)
        raise ConfigError(source, problems + _lined(found, located)) from None
    cluster = Cluster(spec=spec, source=path, nodes=build_nodes(spec), located=located)
    if problems := problems + _lined(validate.check(cluster), located):
        raise ConfigError(source, problems)
    return cluster


def _lined(found: list[Problem], located: Located) -> list[Problem]:
    return [p if p.line else replace(p, line=located.line_of(p.path)) for p in found]


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))  # fmt: skip


def _read_small_text(path: Path) -> str:
    """The text of a regular file of at most MAX_BYTES; a FIFO (which would block the
    run) and a device (/dev/zero, read without end) are refused by what fstat says before any
    byte is read. Raise ConfigError's (what, fix) as a ValueError."""
    # O_NONBLOCK: opening a FIFO returns at once, so fstat can refuse it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ValueError("the path is a directory, not a file", "name the file")
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "something else")
            raise ValueError(f"the path is {kind}, not a regular file", "name a cluster.yaml file")
        data = os.read(fd, MAX_BYTES + 1)
        while len(data) <= MAX_BYTES and (chunk := os.read(fd, 65536)):
            data += chunk
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        size = st.st_size if st.st_size > MAX_BYTES else f"more than {MAX_BYTES}"
        raise ValueError(
            f"the file is {size} bytes; a cluster file is at most {MAX_BYTES} bytes (1 MiB)",
            "name the cluster.yaml file (is this the right path?)",
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


# -- pydantic's validation errors in the user's words: located sentences with a fix --------------
# Each error's `loc` is followed through ClusterSpec's JSON Schema (choices, bounds, examples,
# keys); HINTS add words per shape of path (list indexes and mapping keys as `*`, a mapping's
# keys as `[key]`) where the schema alone says too little.


class Hint(NamedTuple):
    example: str = ""  # YAML as the user writes it
    rule: str = ""  # what a pattern (or a key) allows, in words
    note: str = ""


_QSFP = "is not a QSFP port: a Spark has ports 0 and 1 (0 is the cage nearest the RJ45 port)"
HINTS: dict[tuple[str, ...], Hint] = {
    ("topology",): Hint(note="direct: 2 nodes, mesh: 3, ring: 4 or more, switch: 2 to 128"),
    ("mtu",): Hint(note="9000 for jumbo frames, 1500 is Ethernet's default"),
    ("nodes",): Hint(example="[{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}, ...]"),
    ("nodes", "*"): Hint(example="{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}"),
    ("nodes", "*", "ports"): Hint(example="{1: [192.168.100.11/24, 192.168.101.11/24]}"),
    ("nodes", "*", "ports", "[key]"): Hint(rule=_QSFP),
    ("nodes", "*", "link_speed", "[key]"): Hint(rule=_QSFP),
    ("nodes", "*", "ports", "*"): Hint(
        "[192.168.100.11/24, 192.168.101.11/24]",
        "rail addresses",
        "one for each rail: the port's two PCIe halves",
    ),
    ("nodes", "*", "ports", "*", "*"): Hint(example="192.168.100.11/24"),
    ("thresholds", "[key]"): Hint(rule="is not a known threshold"),
    ("thresholds", "*"): Hint(example="90"),
    ("nccl", "size"): Hint(rule="a size is a whole number with an optional K, M or G"),
    ("simulate", "faults", "*"): Hint(example="{fault: link_down, node: spark-1}"),
}
_TYPE_WORDS = {
    kind: words
    for words, kinds in {
        "must be text": ("string_type",),
        "must be a whole number": ("int_type", "int_parsing", "int_from_float"),
        "must be a whole number of sensible size": ("int_parsing_size",),
        "must be a number": ("float_type", "float_parsing"),
        "must be true or false": ("bool_type", "bool_parsing"),
        "must be a mapping (key: value)": ("dict_type", "model_type", "model_attributes_type"),
        "must be a list": ("list_type", "tuple_type", "iterable_type"),
    }.items()
    for kind in kinds
}
_LIMITS = {
    "greater_than": ("small", "more than"),
    "greater_than_equal": ("small", "at least"),
    "less_than": ("large", "less than"),
    "less_than_equal": ("large", "at most"),
}


@cache
def _schema() -> dict[str, Any]:
    return ClusterSpec.model_json_schema()


def _solid(node: dict[str, Any]) -> dict[str, Any]:
    """The schema itself: $refs followed, an optional's null branch dropped."""
    while "$ref" in node or "anyOf" in node:
        if "$ref" in node:
            node = _schema()["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        else:  # a rail's short form (text) or mapping: the mapping, which the path walks into
            branches = [b for b in node["anyOf"] if b.get("type") not in ("null", "string")]
            node = branches[0] if len(branches) == 1 else node["anyOf"][0]
    return node


class _Spot(NamedTuple):
    prop: dict[str, Any]  # as the parent names it: with its examples
    node: dict[str, Any]  # _solid(prop)
    shape: tuple[str, ...]
    name: str  # the last field name on the way


def _at(loc: Path_) -> _Spot:
    """What the schema says at `loc` (field names, list indexes, mapping keys)."""
    prop = node = _schema()
    shape: tuple[str, ...] = ()
    name = ""
    for step in loc:
        field = isinstance(step, str) and step in node.get("properties", {})
        if field:
            prop, name = node["properties"][step], str(step)
        elif "prefixItems" in node and isinstance(step, int):
            prop = node["prefixItems"][min(step, len(node["prefixItems"]) - 1)]
        elif "items" in node:
            prop = node["items"]
        elif isinstance(node.get("additionalProperties"), dict):
            prop = node["additionalProperties"]
        else:
            return _Spot({}, {}, (*shape, "?"), name)
        shape, node = (*shape, name if field else "*"), _solid(prop)
    return _Spot(prop, node, shape, name)


def _raw_at(data: Any, loc: Path_) -> tuple[Path_, Any, bool]:
    """Follow `loc` into the user's data; stop where a scalar stands in for a mapping (the
    short forms, e.g. a rail written as its address): the path the user sees ends there."""
    cur = data
    for i, step in enumerate(loc):
        cur = dict(enumerate(cur)) if isinstance(cur, list) else cur
        if not isinstance(cur, Mapping):
            return loc[:i], cur, True
        if step not in cur:
            return loc, None, False
        cur = cur[step]
    return loc, cur, True


def _guess(value: Any, options: list[Any], rest: str) -> str:
    """`did you mean 'ssh'? The choices: ...` or just `rest`."""
    by_lower = {str(o).lower(): str(o) for o in options}
    close = difflib.get_close_matches(str(value).lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[close[0]]!r}? {rest[:1].upper()}{rest[1:]}" if close else rest


def _num(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _bounds(node: Mapping[str, Any]) -> str:
    lo, hi = node.get("minimum"), node.get("maximum")
    if lo is not None and hi is not None:
        return f"use a value from {_num(lo)} to {_num(hi)}"
    words = {"minimum": "of at least", "exclusiveMinimum": "above"}
    words |= {"maximum": "of at most", "exclusiveMaximum": "below"}
    parts = [f"{w} {_num(node[k])}" for k, w in words.items() if node.get(k) is not None]
    return "use a value " + " and ".join(parts) if parts else ""


def _worded(err: ValidationError, located: Located) -> list[Problem]:
    """Each pydantic error on ClusterSpec as a located sentence with the value seen and a fix."""
    errors = err.errors(include_url=False)
    missing = {tuple(e["loc"]) for e in errors if e["type"] == "missing"}
    typos: dict[Path_, str] = {}  # a misspelt key -> the missing key it stands for
    for e in (e for e in errors if e["type"] == "extra_forbidden"):
        at = tuple(e["loc"])
        known = list(_at(at[:-1]).node.get("properties", {}))
        close = difflib.get_close_matches(str(at[-1]), known, n=1, cutoff=0.6)
        if close and (*at[:-1], close[0]) in missing:
            typos[at] = close[0]
    told = {(*k[:-1], v) for k, v in typos.items()}
    out = []
    for e in errors:
        loc: Path_ = tuple(p for p in e["loc"] if not str(p).startswith("function-"))
        kind, ctx, value = str(e["type"]), e.get("ctx") or {}, e.get("input")
        if loc in typos:
            message = f"is not a known key, and {typos[loc]} is missing"
            out.append(Problem(loc, located.line_of(loc), message, f"did you mean {typos[loc]!r}?"))
        # A missing key told with its misspelling; a list too short by the items that failed.
        if loc in typos or (kind == "missing" and loc in told):
            continue
        if kind == "too_short" and len(value) >= int(ctx.get("min_length", 0)):
            continue
        on_key = loc[-1:] == ("[key]",)
        loc = loc[:-1] if on_key else loc
        if kind == "missing" and loc and isinstance(loc[-1], int):
            loc, kind = loc[:-1], "too_short_fixed"  # a port's two rails: told on the list
        shown, raw, found = _raw_at(located.data, loc)
        if found and (shown != loc or kind == "too_short_fixed"):
            value = raw  # a short form: the user wrote a scalar where the mapping would be
        parent = _raw_at(located.data, loc[:-1])[1] if kind == "extra_forbidden" else None
        present = set(parent) - {loc[-1]} if isinstance(parent, Mapping) else set()
        message, fix = _words(kind, e, value, loc, on_key, present)
        out.append(Problem(shown, located.line_of(shown), message, fix))
    return out


def _words(
    kind: str, e: Any, value: Any, loc: Path_, on_key: bool, present: set[Any]
) -> tuple[str, str]:
    """(message, fix) for one error; the message continues the path as a sentence. `present`:
    the keys beside an unknown one (no suggestion)."""
    ctx, msg = e.get("ctx") or {}, str(e["msg"])
    if "fix" in ctx:  # our own PydanticCustomError: the validator wrote the words
        return msg, str(ctx["fix"])
    key, (prop, node, shape, name) = loc[-1] if loc else None, _at(loc)
    if on_key:
        parent = _at(loc[:-1])
        keys = parent.node.get("propertyNames", {}).get("enum", [])
        if not keys:
            what = f"is a key that {_TYPE_WORDS.get(kind, 'is not allowed')}"
            return what, "write the key as text"
        rule = HINTS.get((*parent.shape, "[key]"), Hint()).rule
        listing = " or ".join(keys) if len(keys) <= 3 else "one of " + ", ".join(keys)
        rule = rule or f"is not an allowed key: the keys are {', '.join(keys)}"
        return rule, _guess(key, keys, f"use {listing}")
    hint = HINTS.get(shape, Hint())
    note = f" ({hint.note})" if hint.note else ""
    write = hint.example or (_inline(prop["examples"][0]) if prop.get("examples") else "")
    write = f"{key}: {write}" if write and isinstance(key, str) and key == name else write
    like = f"write it like `{write}`" if write else ""
    if kind == "missing":
        fix = f"add `{write}`{note}" if write else "add it (see docs/cluster-yaml.md)"
        return "is missing", fix
    if kind == "too_short_fixed":
        size, n = len(node.get("prefixItems", ())), len(value) if isinstance(value, list) else 0
        both = "both" if size == 2 else f"all {size}"
        return f"lists {n} of its {size} {hint.rule or 'items'}", f"give {both}: `{write}`{note}"
    if kind == "extra_forbidden":
        parent = _at(loc[:-1])
        known = list(parent.node.get("properties", {}))
        where = f"keys of {parent.name}" if parent.name else "top-level keys"
        listing = f"the {where} are: {', '.join(known)}"
        fix = _guess(key, [k for k in known if k not in present], listing)
        return "is not a known key", fix if fix != listing else f"remove it; {listing}"
    if kind == "literal_error":
        allowed = node.get("enum") or [node.get("const")]
        words = ", ".join(map(str, allowed))
        fix = _guess(value, allowed, f"use one of {words}{note}")
        return f"{seen(value)} is not one of {words}", fix
    if kind.startswith("ip_"):
        what = f"{seen(value)} is not an IPv4 address with a prefix length"
        return what, "write it like 192.168.100.11/24"
    if kind in _LIMITS:
        (big, bound), limit = _LIMITS[kind], _num(next(iter(ctx.values()), ""))
        plain = str(value) if isinstance(value, int | float) else seen(value)
        return f"{plain} is too {big}: it must be {bound} {limit}", (_bounds(node) + note).strip()
    if kind == "string_too_short":
        return "must not be empty", f"write `{write}`" if write else "give it a value or remove it"
    if kind == "string_pattern_mismatch":
        why = hint.rule or f"it must match {ctx['pattern']}"
        return f"{seen(value)} is not valid: {why}", like or "fix the value"
    if kind in ("too_short", "too_long"):
        got = len(value) if isinstance(value, list | tuple | Mapping) else ctx.get("actual_length")
        most = ("needs at least", "min") if kind == "too_short" else ("takes at most", "max")
        return f"{most[0]} {ctx.get(most[1] + '_length')} {hint.rule or 'items'}; got {got}", like
    if kind == "finite_number":
        return f"must be a finite number; got {seen(value)}", _bounds(node) or "use a number"
    if (must := _TYPE_WORDS.get(kind)) is None:
        return msg.removeprefix("Value error, "), like
    got, required = f"{must}; got {seen(value)}", node.get("required", [])
    if kind.startswith("model") and len(required) == 1 and isinstance(value, str | int | float):
        return got, f"write it like `{name}: {{{required[0]}: {value}}}`"
    if kind == "string_type" and isinstance(value, bool):
        return got, "put it in quotes: YAML reads yes, no, on, off, true and false as true or false"
    if kind == "string_type" and isinstance(value, int | float | datetime.date):
        text = value.isoformat() if isinstance(value, datetime.date) else str(value)
        return got, f"put it in quotes: `{f'{key}: ' if isinstance(key, str) else ''}'{text}'`"
    return got, like or ("write true or false" if kind.startswith("bool") else _bounds(node))


def _inline(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
    return text.removesuffix("\n...\n").strip()
