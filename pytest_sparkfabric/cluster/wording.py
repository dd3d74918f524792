"""pydantic's validation errors in the user's words: located sentences with a fix.

Each error becomes the path, what is wrong, the value seen, and a fix; `Hint`s add words per
shape of path where the schema alone says too little.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args, get_origin

import annotated_types
import yaml
from pydantic import BaseModel, ValidationError

from pytest_sparkfabric.cluster.schema_path import Shape, Spot, is_model, unwrap, walk
from pytest_sparkfabric.cluster.source import Located, Path_, SourceProblem


@dataclass(frozen=True)
class Hint:
    """What a value at one shape of the file is, for messages: `example` is YAML as the user
    writes it; `rule` says in words what a pattern or range allows."""

    example: str = ""
    rule: str = ""
    note: str = ""


def seen(value: Any) -> str:
    """How a value the user wrote reads in a message: `the number 5`, `'abc'`, `a list`."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text) if text else "an empty text ''"
    if isinstance(value, datetime.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"a {type(value).__name__}"


def inline(value: Any) -> str:
    """A value as one line of YAML flow style."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def _bounds(spot: Spot, ctx: Mapping[str, Any]) -> str:
    lo: Any = None
    hi: Any = None
    lo_open = hi_open = False
    for m in spot.meta:
        if isinstance(m, annotated_types.Ge):
            lo = m.ge
        elif isinstance(m, annotated_types.Gt):
            lo, lo_open = m.gt, True
        elif isinstance(m, annotated_types.Le):
            hi = m.le
        elif isinstance(m, annotated_types.Lt):
            hi, hi_open = m.lt, True
    if lo is None and ("ge" in ctx or "gt" in ctx):
        lo, lo_open = ctx.get("ge", ctx.get("gt")), "gt" in ctx
    if hi is None and ("le" in ctx or "lt" in ctx):
        hi, hi_open = ctx.get("le", ctx.get("lt")), "lt" in ctx
    if lo is not None and hi is not None and not lo_open and not hi_open:
        return f"use a value from {_num(lo)} to {_num(hi)}"
    parts = []
    if lo is not None:
        parts.append(f"above {_num(lo)}" if lo_open else f"at least {_num(lo)}")
    if hi is not None:
        parts.append(f"below {_num(hi)}" if hi_open else f"at most {_num(hi)}")
    return "use a value " + " and ".join(parts) if parts else ""


def _choices(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values)


def _guess(value: Any, options: list[Any], rest: str) -> str:
    """`did you mean 'ssh'? The choices: ...` or just `rest`."""
    by_lower = {str(o).lower(): str(o) for o in options}
    close = difflib.get_close_matches(str(value).lower(), list(by_lower), n=1, cutoff=0.6)
    if not close:
        return rest
    return f"did you mean {by_lower[close[0]]!r}? {rest[:1].upper()}{rest[1:]}"


def _num(value: Any) -> Any:
    """0.0 -> 0: limits as the user would write them."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _plain(value: Any) -> str:
    """A number as the user wrote it; anything else as `seen` tells it."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return seen(value)


def _write(spot: Spot, hint: Hint, key: str | int | None) -> str:
    """`topology: ring` - how the value at this spot is written, from the hint or the field."""
    example = hint.example
    if not example and spot.info is not None and spot.info.examples:
        example = inline(spot.info.examples[0])
    if not example:
        return ""
    return f"{key}: {example}" if isinstance(key, str) and key == spot.name else example


def _like(write: str, default: str = "fix the value") -> str:
    return f"write it like `{write}`" if write else default


_TYPE_WORDS = {
    "string_type": "must be text",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_parsing_size": "must be a whole number of sensible size",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "dict_type": "must be a mapping (key: value)",
    "model_type": "must be a mapping (key: value)",
    "model_attributes_type": "must be a mapping (key: value)",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "set_type": "must be a list",
    "iterable_type": "must be a list",
}


def _raw_at(data: Any, loc: Path_) -> tuple[Path_, Any, bool]:
    """Follow `loc` into the user's data; stop where a scalar stands in for a mapping (the
    short forms, e.g. a rail written as its address): the path the user sees ends there."""
    cur = data
    for i, step in enumerate(loc):
        if isinstance(cur, Mapping):
            if step not in cur:
                return loc, None, False
            cur = cur[step]
        elif isinstance(cur, list) and isinstance(step, int) and 0 <= step < len(cur):
            cur = cur[step]
        else:
            return loc[:i], cur, True
    return loc, cur, True


def validation_problems(
    err: ValidationError,
    located: Located,
    root: type[BaseModel],
    hints: Mapping[Shape, Hint],
) -> list[SourceProblem]:
    """Each pydantic error as a located sentence with the value seen and a fix.

    `hints` add words per shape of path (`("nodes", "*", "ports", "*")`; `"[key]"` ends the
    shape of a mapping's keys) where the schema alone says too little."""
    problems: list[SourceProblem] = []
    errors = err.errors(include_url=False)
    missing = {tuple(e["loc"]) for e in errors if e["type"] == "missing"}
    typos: dict[Path_, str] = {}  # a misspelt key and the missing key it stands for
    for e in errors:
        where: Path_ = tuple(e["loc"])
        if e["type"] == "extra_forbidden" and where:
            parent = unwrap(walk(root, where[:-1]).tp)
            known = list(parent.model_fields) if is_model(parent) else []
            close = difflib.get_close_matches(str(where[-1]), known, n=1, cutoff=0.6)
            if close and (*where[:-1], close[0]) in missing:
                typos[where] = close[0]
    for e in errors:
        kind = str(e["type"])
        if kind == "missing" and tuple(e["loc"]) in {(*k[:-1], v) for k, v in typos.items()}:
            continue  # told with the misspelt key
        if kind == "extra_forbidden" and tuple(e["loc"]) in typos:
            spelt = tuple(e["loc"])
            problems.append(
                SourceProblem(
                    spelt,
                    located.line_of(spelt),
                    f"is not a known key, and {typos[spelt]} is missing",
                    f"did you mean {typos[spelt]!r}?",
                )
            )
            continue
        ctx: Mapping[str, Any] = e.get("ctx") or {}
        value = e.get("input")
        if (
            kind == "too_short"
            and isinstance(value, list | tuple | Mapping)
            and len(value) >= int(ctx.get("min_length", 0))
        ):
            continue  # pydantic counts only the items that validated: the items' errors say it
        loc: Path_ = tuple(
            p
            for p in e["loc"]
            if isinstance(p, int) or (isinstance(p, str) and not p.startswith("function-"))
        )
        on_key = "[key]" in loc
        loc = tuple(p for p in loc if p != "[key]")
        if kind == "missing" and loc and isinstance(loc[-1], int):
            # A fixed-length list (a port's two rails) is short: tell it on the list.
            loc = loc[:-1]
            kind = "too_short_fixed"
        spot = walk(root, loc)
        shown, raw, found = _raw_at(located.data, loc)
        if found and shown != loc:
            value = raw  # a short form: the user wrote a scalar where the mapping would be
        elif found and kind == "too_short_fixed":
            value = raw
        if on_key:
            hint = hints.get((*walk(root, loc[:-1]).shape, "[key]"), Hint())
        else:
            hint = hints.get(spot.shape, Hint())
        if kind == "extra_forbidden":
            parent_raw = _raw_at(located.data, loc[:-1])[1]
            present = set(parent_raw) - {loc[-1]} if isinstance(parent_raw, Mapping) else set()
            ctx = {**ctx, "present": present}
        msg, fix = _words(kind, e, ctx, value, spot, hint, loc, on_key, root)
        problems.append(SourceProblem(shown, located.line_of(shown), msg, fix))
    return problems


def _words(
    kind: str,
    e: Any,
    ctx: Mapping[str, Any],
    value: Any,
    spot: Spot,
    hint: Hint,
    loc: Path_,
    on_key: bool,
    root: type[BaseModel],
) -> tuple[str, str]:
    """(message, fix) for one error; the message continues the path as a sentence."""
    key = loc[-1] if loc else None
    write = _write(spot, hint, key)
    note = f" ({hint.note})" if hint.note else ""
    if on_key and not ctx.get("fix"):
        return _key_words(kind, key, hint, walk(root, loc[:-1]))
    if kind == "missing":
        return (
            "is missing",
            f"add `{write}`{note}" if write else "add it (see docs/cluster-yaml.md)",
        )
    if kind == "too_short_fixed":
        size = len(get_args(unwrap(spot.tp)))
        n = len(value) if isinstance(value, list) else 0
        what = hint.rule or "items"
        both = "both" if size == 2 else f"all {size}"
        return f"lists {n} of its {size} {what}", f"give {both}: `{write}`{note}"
    if kind == "extra_forbidden":
        parent = walk(root, loc[:-1])
        tp = unwrap(parent.tp)
        known = list(tp.model_fields) if is_model(tp) else []
        where = f"keys of {parent.name}" if parent.name else "top-level keys"
        free = [k for k in known if k not in ctx.get("present", ())]
        listing = f"the {where} are: {_choices(known)}"
        fix = _guess(key, free, listing)
        return "is not a known key", fix if fix != listing else f"remove it; {listing}"
    if kind in ("literal_error", "enum"):
        allowed = list(get_args(unwrap(spot.tp))) if spot.known else []
        words = _choices(allowed) if allowed else str(ctx.get("expected", ""))
        return f"{seen(value)} is not one of {words}", _guess(
            value, allowed, f"use one of {words}{note}"
        )
    if kind in ("ip_v4_interface", "ip_v4_address", "ip_any_interface", "ip_any_address"):
        return (
            f"{seen(value)} is not an IPv4 address with a prefix length",
            "write it like 192.168.100.11/24",
        )
    if kind in _LIMITS:
        big, bound_words = _LIMITS[kind]
        limit = _num(next(iter(ctx.values()), ""))
        return f"{_plain(value)} is too {big}: it must be {bound_words} {limit}", (
            _bounds(spot, ctx) + note
        ).strip()
    if kind == "string_too_short":
        return "must not be empty", f"write `{write}`" if write else "give it a value or remove it"
    if kind == "string_too_long":
        limit = ctx.get("max_length")
        return f"{seen(value)} is too long: at most {limit} characters", hint.rule or "shorten it"
    if kind == "string_pattern_mismatch":
        rule = hint.rule or f"it must match {ctx.get('pattern', '')}"
        return f"{seen(value)} is not valid: {rule}", _like(write)
    if kind in ("too_short", "too_long"):
        got = len(value) if isinstance(value, list | tuple | Mapping) else ctx.get("actual_length")
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        need = "needs at least" if kind == "too_short" else "takes at most"
        return f"{need} {bound} {hint.rule or 'items'}; got {got}", _like(write, "")
    if kind == "finite_number":
        return f"must be a finite number; got {seen(value)}", _bounds(spot, ctx) or "use a number"
    if kind in ("model_type", "model_attributes_type") and isinstance(value, str | int | float):
        model = unwrap(spot.tp)
        needed = (
            [k for k, f in model.model_fields.items() if f.is_required()] if is_model(model) else []
        )
        if len(needed) == 1 and spot.name:
            return (
                f"{_TYPE_WORDS[kind]}; got {seen(value)}",
                f"write it like `{spot.name}: {{{needed[0]}: {value}}}`",
            )
    if kind == "string_type" and isinstance(value, bool):
        return f"{_TYPE_WORDS[kind]}; got {seen(value)}", (
            "put it in quotes: YAML reads yes, no, on, off, true and false as true or false"
        )
    if kind == "string_type" and isinstance(value, int | float | datetime.date):
        text = value.isoformat() if isinstance(value, datetime.date) else str(value)
        quoted = f"{key}: '{text}'" if isinstance(key, str) else f"'{text}'"
        return f"{_TYPE_WORDS[kind]}; got {seen(value)}", f"put it in quotes: `{quoted}`"
    if kind in _TYPE_WORDS:
        return f"{_TYPE_WORDS[kind]}; got {seen(value)}", _like(write, _bounds(spot, ctx))
    # value_error, assertion_error and our own PydanticCustomError: the validator wrote the text.
    msg = str(e.get("msg", kind)).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if msg[:1].isupper() and not msg[:2].isupper():
        msg = msg[0].lower() + msg[1:]
    return msg, str(ctx.get("fix", "")) or _like(write, "")


_LIMITS = {
    "greater_than": ("small", "more than"),
    "greater_than_equal": ("small", "at least"),
    "less_than": ("large", "less than"),
    "less_than_equal": ("large", "at most"),
}


def _key_words(kind: str, key: Any, hint: Hint, parent: Spot) -> tuple[str, str]:
    tp = unwrap(parent.tp)
    args = get_args(tp)
    keys = list(get_args(unwrap(args[0]))) if get_origin(tp) is dict and args else []
    if keys:
        rule = hint.rule or f"is not an allowed key: the keys are {_choices(keys)}"
        return rule, _guess(key, keys, f"use {' or '.join(str(k) for k in keys)}")
    return f"is a key that {_TYPE_WORDS.get(kind, 'is not allowed')}", "write the key as text"
