"""JUnit XML: per test, the recorded properties are written by pytest itself (user_properties);
here the cluster under test goes into the suite's global <properties>, and each test case gets
its classname and name from the stable id (`report.items`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.report.data import ReportData
from pytest_sparkfabric.report.items import junit_names

if TYPE_CHECKING:
    from pytest_sparkfabric.report.results import ResultsFile


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

    def __init__(self, data: ReportData, results: ResultsFile | None = None) -> None:
        self.data = data
        self.results = results

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Classnames and names made from the stable ids (pytest's follow the rootdir), in the
        file pytest has just written: its test cases are final before the session ends."""
        xml = _log_xml(session)
        if self.results is None or xml is None or hasattr(session.config, "workerinput"):
            return
        from _pytest.junitxml import mangle_test_address

        prefix = getattr(xml, "prefix", None)

        def joined(names: list[str]) -> tuple[str, str]:
            return ".".join(([prefix] if prefix else []) + names[:-1]), names[-1]

        renames: dict[tuple[str, str], tuple[str, str]] = {}
        for nodeid, stable in self.results.ids.items():
            classname, name = junit_names(stable)
            new = (f"{prefix}.{classname}" if prefix else classname, name)
            renames[joined(mangle_test_address(nodeid))] = new
        rewrite(Path(xml.logfile), renames, self.results.ids)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        xml = _log_xml(session)
        if xml is None:
            return
        for name, value in suite_properties(self.data):
            xml.add_global_property(name, value)


def _log_xml(session: pytest.Session) -> Any:
    """pytest's JUnit XML writer of this run, or None (no --junitxml)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest moved it
        return None
    return session.config.stash.get(xml_key, None)


def rewrite(
    path: Path, renames: dict[tuple[str, str], tuple[str, str]], ids: dict[str, str]
) -> None:
    """Give each test case of a JUnit file its stable classname, name and file."""
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return
    files = {nodeid.partition("::")[0]: stable.partition("::")[0] for nodeid, stable in ids.items()}
    changed = False
    for case in tree.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        if key in renames:
            case.set("classname", renames[key][0])
            case.set("name", renames[key][1])
            changed = True
        if case.get("file") in files:
            case.set("file", files[case.get("file", "")])
    if changed:
        tree.write(path, encoding="utf-8", xml_declaration=True)
