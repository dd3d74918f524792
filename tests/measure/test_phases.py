"""Every phase module has one shape (NAME, measure, accessors through the engine), and the
engine is the only cache."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import get_args

import pytest

from pytest_sparkfabric import measure
from pytest_sparkfabric.measure.engine import PhaseName

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_sparkfabric"
# Every module of measure/ that declares a NAME; a phase without one has no home (below).
PHASES = tuple(
    m.name
    for m in pkgutil.iter_modules(measure.__path__)
    if hasattr(importlib.import_module(f"pytest_sparkfabric.measure.{m.name}"), "NAME")
)


@pytest.mark.parametrize("name", PHASES)
def test_phase_module_shape(name: str) -> None:
    module = importlib.import_module(f"pytest_sparkfabric.measure.{name}")
    assert module.NAME in get_args(PhaseName)
    measure = module.measure
    params = list(inspect.signature(measure).parameters.values())
    # Anything beyond the fabric is what the session selected (the preflight's needs), never
    # a measurement: keyword-only, with a default.
    assert params[0].name == "fabric"
    assert all(p.kind is p.KEYWORD_ONLY and p.default is not p.empty for p in params[1:])
    assert re.search(r"fabric\.phase\(\s*NAME,", inspect.getsource(module))


def test_every_phase_name_has_a_home() -> None:
    homes: dict[str, str] = {}
    for name in PHASES:
        module = importlib.import_module(f"pytest_sparkfabric.measure.{name}")
        for value in vars(module).values():
            if isinstance(value, str) and value in get_args(PhaseName) and value not in homes:
                homes[value] = name
    assert set(get_args(PhaseName)) - set(homes) == {"shell"}  # the engine's own


def test_no_cache_but_the_engine() -> None:
    """One way to measure: nothing keeps results of its own (`once(`, a cache dict, lru_cache)."""
    pattern = re.compile(r"\bonce\(|lru_cache|functools\.cache\b|_cache\b")
    found = [
        f"{p.relative_to(PACKAGE)}:{i}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
