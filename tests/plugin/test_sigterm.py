"""SIGTERM (a CI cancel, a job timeout) ends a run like ^C (issue 22 item 7): the verdict
INCOMPLETE is printed, and the JSON results, JUnit XML and HTML report are written with what was
measured."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

from tests.suite.runner import write_cluster


def test_sigterm_mid_run_still_gives_a_verdict_and_its_files(tmp_path: Path) -> None:
    # Every simulated command takes real time here, so the run is still going when it is ended.
    cluster = write_cluster(
        tmp_path, "direct-2.yaml", changes={"simulate": {"command_latency_ms": 1500}}
    )
    results, junit, html = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    argv = [
        sys.executable, "-m", "pytest", f"--cluster={cluster}", "-p", "no:cacheprovider",
        f"--sparkfabric-json={results}", f"--junitxml={junit}", f"--html={html}",
    ]  # fmt: skip
    run = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)  # fmt: skip
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
