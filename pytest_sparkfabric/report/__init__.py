"""Reports an operator can hand over: pytest-html columns and diagnosis, JUnit properties.

Every test records node / rail / measured / expected (and on failure cause / fix / rule) in
`item.user_properties` through `verdict`; JUnit XML writes those as <property> elements by itself,
the HTML report shows them through the hooks in `report.html`, the JSON results keep them.
"""

from __future__ import annotations

import pytest

from pytest_sparkfabric.report import html, junit

PLUGINS = ((html, "sparkfabric-html"), (junit, "sparkfabric-junit"))


def register(config: pytest.Config) -> None:
    """Register the report hooks (idempotent; works with `-p no:html`: every pytest-html hook
    is optional)."""
    for module, name in PLUGINS:
        if not config.pluginmanager.is_registered(module):
            config.pluginmanager.register(module, name)
