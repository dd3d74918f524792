"""Hypothesis profiles for the project's own tests.

Kept free of `pytest_plugins`: when the shipped suite in acceptance/ runs from a checkout, pytest
loads this file as a non-root conftest (pytester comes from `addopts` in pyproject.toml instead).
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("sparkfabric_cluster", None):
        return  # the shipped suite: hypothesis is some 0.3 s of CPU to import, for nothing
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "ci", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.register_profile("dev", max_examples=25, deadline=None)
    settings.load_profile("ci" if os.environ.get("CI") else "dev")
