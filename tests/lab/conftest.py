"""Lab tests: `@pytest.mark.lab` modules skip (with the reason) without root or `ip netns`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.lab.labkit import LAB_ROOT


@pytest.fixture(scope="session", autouse=True)
def _no_empty_lab_root() -> Iterator[None]:
    yield
    with contextlib.suppress(OSError):
        LAB_ROOT.rmdir()  # only when empty: labs of other runs may still be in it
