"""The plugin uses pytest's public API only (issue 23 item 4): no `_pytest` import, no private
attribute of pytest's objects (terminal writer, reporter, config, items, reports)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = re.compile(
    r"\b_pytest\b|\b(?:config|session|item|items|report|reporter|terminalreporter|tw|request|"
    r"metafunc|pluginmanager|parser|callspec|capture|xml)\._[a-zA-Z]"
)


def test_no_private_pytest_anywhere_in_the_product() -> None:
    files = [*ROOT.glob("pytest_sparkfabric/**/*.py"), *ROOT.glob("acceptance/*.py")]
    assert files
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert found == []
