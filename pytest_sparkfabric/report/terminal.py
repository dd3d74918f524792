"""The verdict as the last lines of a terminal run (the same words as the HTML banner)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_sparkfabric.report.results import ResultsFile

MARKUP = {"good": {"green": True, "bold": True}, "bad": {"red": True}, "warn": {"yellow": True}}


class TerminalVerdict:
    """A pytest plugin: after every other summary section, the verdict and its root causes."""

    def __init__(self, results: ResultsFile) -> None:
        self.results = results

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        # Outermost wrapper: after pytest's short test summary, right above its last line.
        yield
        doc = self.results.doc
        if doc is None or terminalreporter.config.option.collectonly:
            return
        from pytest_sparkfabric.report import banner
        from pytest_sparkfabric.report.build import build

        report = build(doc)
        terminalreporter.section("sparkfabric verdict", bold=True)
        for line in banner.terminal_lines(report.summary, report.causes, report.items):
            terminalreporter.write_line(line.text, **MARKUP.get(line.tone, {}))
