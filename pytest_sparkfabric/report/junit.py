"""JUnit XML: per test, the recorded properties are written by pytest itself (user_properties);
here the cluster under test goes into the suite's global <properties>."""

from __future__ import annotations

import pytest


def suite_properties(config: pytest.Config) -> list[tuple[str, str]]:
    from pytest_sparkfabric.plugin import get_session

    s = get_session(config)
    if s is None:
        return []
    c = s.cluster
    return [
        ("sparkfabric_cluster", str(c.source) if c.source else "cluster.yaml"),
        ("sparkfabric_topology", c.topology),
        ("sparkfabric_nodes", ",".join(n.name for n in c.nodes)),
        ("sparkfabric_transport", c.spec.transport),
        ("sparkfabric_mtu", str(c.mtu)),
        *(("sparkfabric_warning", w) for w in s.warnings),
    ]


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest moved it
        return
    xml = session.config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, value in suite_properties(session.config):
        xml.add_global_property(name, value)
