"""What the schema says about one path of a cluster file: its field, type, shape and limits.

`wording.py` words an error by the field it lands on; this walks the pydantic model types along
the error's path (field names, list indexes, mapping keys) to find that field.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pytest_sparkfabric.cluster.source import Path_

Shape = tuple[str, ...]


def unwrap(tp: Any) -> Any:
    """Strip Annotated and Optional from a type."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            rest = [a for a in get_args(tp) if a is not type(None)]
            if len(rest) != 1:
                return tp
            tp = rest[0]
        else:
            return tp


def _metadata(tp: Any) -> list[Any]:
    out: list[Any] = []
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            args = get_args(tp)
            out += list(args[1:])
            for a in args[1:]:
                if isinstance(a, FieldInfo):
                    out += a.metadata
            tp = args[0]
        elif origin in (Union, types.UnionType):
            rest = [a for a in get_args(tp) if a is not type(None)]
            if len(rest) != 1:
                return out
            tp = rest[0]
        else:
            return out


@dataclass
class Spot:
    """What the schema says about one path: the field, its type, and its shape."""

    info: FieldInfo | None = None  # the field, when the path ends on a named field
    tp: Any = None
    shape: Shape = ()
    name: str = ""  # the last named field on the way
    meta: list[Any] = field(default_factory=list)  # constraints: Ge, Le, MaxLen, ...
    known: bool = True


def is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def walk(root: type[BaseModel], loc: Path_) -> Spot:
    """Walk the model types along `loc` (field names, list indexes, mapping keys)."""
    spot = Spot(tp=root)
    for step in loc:
        tp = unwrap(spot.tp)
        if is_model(tp):
            fields = tp.model_fields
            if not isinstance(step, str) or step not in fields:
                return Spot(known=False, shape=(*spot.shape, "?"))
            info = fields[step]
            spot = Spot(info, info.annotation, (*spot.shape, step), step, list(info.metadata))
            continue
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is tuple and args:
            if len(args) == 2 and args[1] is Ellipsis:
                inner = args[0]
            elif isinstance(step, int) and 0 <= step < len(args):
                inner = args[step]
            else:
                inner = args[0]
        elif origin is dict and len(args) == 2:
            inner = args[1]
        else:
            return Spot(known=False, shape=(*spot.shape, "?"))
        spot = Spot(None, inner, (*spot.shape, "*"), spot.name)
    spot.meta = [*spot.meta, *_metadata(spot.tp)]
    return spot
