"""The JSON results document and the JUnit suite properties, from the run's ReportData."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.report import ReportData, junit, results

DIRECT = Path(__file__).resolve().parents[2] / "examples" / "direct-2.yaml"


def _data() -> ReportData:
    return ReportData.of(load_cluster(DIRECT), ["WARNING one"])


def test_document_keeps_the_shape_of_the_results_file() -> None:
    data = _data()
    row = {"nodeid": "a::b", "outcome": "passed", "duration_s": 0.1, "properties": {},
           "message": None, "skip_reason": None}  # fmt: skip
    doc = results.document(data, [row])
    assert doc == {
        "cluster": str(DIRECT),
        "topology": "direct",
        "nodes": ["spark-1", "spark-2"],
        "transport": "sim",
        "warnings": ["WARNING one"],
        "causes": [],
        "tests": [row],
    }
    json.dumps(doc)


def test_results_file_writes_on_the_session_end_only_where_asked(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "results.json"
    plugin = results.ResultsFile(_data(), out)

    class Config:
        pass

    class Session:
        config = Config()

    plugin.pytest_sessionfinish(Session())  # type: ignore[arg-type]
    assert json.loads(out.read_text())["tests"] == []
    assert out.stat().st_mode & 0o077 == 0
    Session.config.workerinput = {}  # type: ignore[attr-defined]  # an xdist worker writes nothing
    out.unlink()
    plugin.pytest_sessionfinish(Session())  # type: ignore[arg-type]
    assert not out.exists()


def test_junit_suite_properties() -> None:
    props = dict(junit.suite_properties(_data()))
    assert props == {
        "sparkfabric_cluster": str(DIRECT),
        "sparkfabric_topology": "direct",
        "sparkfabric_nodes": "spark-1,spark-2",
        "sparkfabric_transport": "sim",
        "sparkfabric_mtu": "9000",
        "sparkfabric_warning": "WARNING one",
    }


def test_reports_need_neither_the_plugin_nor_the_session() -> None:
    """The report modules take what they show as ReportData: no way back to the plugin."""
    code = (
        "import sys, pytest_sparkfabric.report as r; "
        "print(sorted(m for m in sys.modules if m.startswith('pytest_sparkfabric.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout
    for module in ("plugin", "session", "fixtures", "measure", "transport"):
        assert f"'pytest_sparkfabric.{module}" not in loaded, loaded
