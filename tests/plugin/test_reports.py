"""A report that cannot be written costs only itself (issue 22 item 6): the verdict and the FAILED
list are still printed, the other reports written, one line names the file lost. SIGTERM ends a
run like ^C with the verdict INCOMPLETE and every report written (item 7). Reports are 0600."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.suite.runner import write_cluster
from tests.transport.conftest import tiny_tmpfs

MTU = Path(__file__).resolve().parents[2] / "examples" / "faults" / "mtu.yaml"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """Room for JUnit XML, not for the HTML report or the JSON results."""
    yield from tiny_tmpfs(tmp_path / "full")


def _argv(cluster: Path, results: Path, html: Path, junit: Path, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", f"--cluster={cluster}", "-p", "no:cacheprovider",
        f"--sparkfabric-json={results}", f"--html={html}", f"--junitxml={junit}", *more,
    ]  # fmt: skip


def _run(tmp: Path, results: Path, html: Path, junit: Path) -> subprocess.CompletedProcess[str]:
    argv = _argv(MTU, results, html, junit, "-m", "mtu or links")
    r = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "sparkfabric: REJECTED  mtu: direct, 2 nodes" in r.stdout
    assert "FAILED test_mtu.py::test_mtu[spark-2:rail0]" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr and "INTERNALERROR" not in r.stdout
    return r


def _private(path: Path) -> bool:
    return oct(path.stat().st_mode & 0o777) == "0o600"


def test_reports_on_a_full_disk(tmp_path: Path, full_disk: Path) -> None:
    html, junit, results = full_disk / "r.html", full_disk / "j.xml", full_disk / "r.json"
    r = _run(tmp_path, results, html, junit)
    lost = []
    for path, read in ((html, Path.read_text), (junit, ElementTree.parse), (results, _json)):
        if f"sparkfabric: could not write {path}: No space left on device" in r.stdout:
            assert not path.exists(), f"{path} was left half written"
            lost.append(path)
        else:
            read(path)  # written, and whole
            assert _private(path), path
    assert 0 < len(lost) < 3, r.stdout[-2000:]


def _json(path: Path) -> object:
    return json.loads(path.read_text())


def test_an_unwritable_junit_path_loses_only_junit(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    html, results = tmp_path / "r.html", tmp_path / "r.json"
    r = _run(tmp_path, results, html, blocker / "j.xml")
    assert f"sparkfabric: could not write {blocker / 'j.xml'}" in r.stdout
    assert json.loads(results.read_text())["verdict"] == "rejected"
    assert "sparkfabric: mtu REJECTED" in html.read_text()
    assert _private(html) and _private(results)


def test_sigterm_mid_run_still_gives_a_verdict_and_its_files(tmp_path: Path) -> None:
    # Every simulated command takes real time here, so the run is still going when it is ended.
    cluster = write_cluster(
        tmp_path, "direct-2.yaml", changes={"simulate": {"command_latency_ms": 1500}}
    )
    results, junit, html = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    run = subprocess.Popen(_argv(cluster, results, html, junit), cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    assert run.stdout is not None
    seen = ""
    while "test_addressing.py" not in seen:  # tests are running
        line = run.stdout.readline()
        assert line, seen
        seen += line
    run.send_signal(signal.SIGTERM)
    out = seen + run.communicate(timeout=120)[0]
    assert run.returncode == 2, out[-3000:]  # interrupted, as with ^C
    assert "KeyboardInterrupt" in out and "signal SIGTERM" in out
    assert "sparkfabric: INCOMPLETE  cluster: direct, 2 nodes" in out, out[-3000:]
    doc = json.loads(results.read_text())
    assert (doc["verdict"], doc["interrupted"]) == ("incomplete", True)
    assert doc["items"] and all(i["outcome"] == "passed" for i in doc["items"])
    ElementTree.parse(junit)
    assert "sparkfabric: cluster INCOMPLETE" in html.read_text()
