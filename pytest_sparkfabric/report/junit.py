"""JUnit XML: per test, the recorded properties are written by pytest itself (user_properties);
here the cluster under test goes into the suite's global <properties>."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.report.data import ReportData


def suite_properties(data: ReportData) -> list[tuple[str, str]]:
    return [
        ("sparkfabric_cluster", data.cluster_file or "cluster.yaml"),
        ("sparkfabric_topology", data.topology),
        ("sparkfabric_nodes", ",".join(data.nodes)),
        ("sparkfabric_transport", data.transport),
        ("sparkfabric_mtu", str(data.mtu)),
        *(("sparkfabric_warning", w) for w in data.warnings),
    ]


class JunitReport:
    """A pytest plugin object: the run's ReportData as the JUnit suite's global properties."""

    def __init__(self, data: ReportData) -> None:
        self.data = data

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        try:
            from _pytest.junitxml import xml_key
        except ImportError:  # pragma: no cover - pytest moved it
            return
        xml = session.config.stash.get(xml_key, None)
        if xml is None:
            return
        for name, value in suite_properties(self.data):
            xml.add_global_property(name, value)
