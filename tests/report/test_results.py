"""The JSON results document and the JUnit suite properties, from the run's ReportData."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.report import ReportData, junit, results, schema

DIRECT = Path(__file__).resolve().parents[2] / "examples" / "direct-2.yaml"


def _data() -> ReportData:
    return ReportData.of(load_cluster(DIRECT), ["WARNING one"])


STARTED = datetime(2026, 6, 1, 10, 0, tzinfo=UTC)


def _item(nodeid: str, outcome: str, **kw: object) -> dict[str, object]:
    row: dict[str, object] = {"id": nodeid, "outcome": outcome, "objects": [], "properties": {}}
    return {**row, **kw}


def test_a_document_without_a_fabric_is_valid_and_judged_by_its_items() -> None:
    items = [_item("test_mtu.py::test_mtu[spark-1:rail0]", "passed")]
    doc = results.document(_data(), items, started=STARTED, duration_s=12.5)
    assert schema.problems(doc) == []
    assert doc["verdict"] == "accepted"
    assert doc["cluster"]["name"] == "direct-2"
    assert doc["cluster"]["nodes"] == [
        {"name": "spark-1", "ports": [1]},
        {"name": "spark-2", "ports": [1]},
    ]
    assert doc["started"] == "2026-06-01T10:00:00+00:00"
    assert (doc["causes"], doc["measurements"], doc["cables"]) == ([], [], [])
    assert doc["warnings"] == ["WARNING one"]
    json.dumps(doc)


def test_the_verdict_follows_the_worst_item() -> None:
    failed = _item("t.py::a", "failed", rule="mtu_mismatch", properties={"rule": "mtu_mismatch"})
    unmeasured = _item("t.py::b", "not_measured", message="not measured: spark-2: ssh: refused")
    ok = _item("t.py::c", "passed")
    for items, verdict in (
        ([ok, failed, unmeasured], "rejected"),
        ([ok, unmeasured], "incomplete"),
        ([], "incomplete"),
    ):
        doc = results.document(_data(), items, started=STARTED, duration_s=1)
        assert doc["verdict"] == verdict
        assert schema.problems(doc) == []


def test_results_file_writes_on_the_session_end_only_where_asked(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "results.json"
    plugin = results.ResultsFile(_data(), out)

    class Config:
        pass

    class Session:
        config = Config()

    plugin.pytest_sessionfinish(Session())  # type: ignore[arg-type]
    written = json.loads(out.read_text())
    assert written["items"] == [] and written["verdict"] == "incomplete"
    assert plugin.doc == written
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
