"""A report that cannot be written costs only itself (issue 22 item 6): on a full disk or an
unwritable path the verdict and the FAILED list are still printed, the other reports are still
written, and one line names the file that was lost. Reports are private (0600)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

MTU = Path(__file__).resolve().parents[2] / "examples" / "faults" / "mtu.yaml"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: room for JUnit XML, not for the HTML report or the JSON results."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "full"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                             capture_output=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        with contextlib.suppress(OSError):
            subprocess.run(["umount", str(where)], check=False)


def _run(tmp: Path, json_path: Path, html: Path, junit: Path) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable, "-m", "pytest", f"--cluster={MTU}", "-p", "no:cacheprovider", "-m",
        "mtu or links", f"--sparkfabric-json={json_path}", f"--html={html}", f"--junitxml={junit}",
    ]  # fmt: skip
    return subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=300, check=False)


def _verdict_and_failures_printed(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "sparkfabric: REJECTED  mtu: direct, 2 nodes" in r.stdout
    assert "FAILED test_mtu.py::test_mtu[spark-2:rail0]" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr and "INTERNALERROR" not in r.stdout


def test_reports_on_a_full_disk(tmp_path: Path, full_disk: Path) -> None:
    html, junit, results = full_disk / "r.html", full_disk / "j.xml", full_disk / "r.json"
    r = _run(tmp_path, results, html, junit)
    _verdict_and_failures_printed(r)
    lost = []
    for path, read in ((html, Path.read_text), (junit, ElementTree.parse), (results, _json)):
        if f"sparkfabric: could not write {path}: No space left on device" in r.stdout:
            assert not path.exists(), f"{path} was left half written"
            lost.append(path)
        else:
            read(path)  # written, and whole
            assert oct(path.stat().st_mode & 0o777) == "0o600", path
    assert 0 < len(lost) < 3, r.stdout[-2000:]


def _json(path: Path) -> object:
    return json.loads(path.read_text())


def test_an_unwritable_junit_path_loses_only_junit(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    html, results = tmp_path / "r.html", tmp_path / "r.json"
    r = _run(tmp_path, results, html, blocker / "j.xml")
    _verdict_and_failures_printed(r)
    assert f"sparkfabric: could not write {blocker / 'j.xml'}" in r.stdout
    assert json.loads(results.read_text())["verdict"] == "rejected"
    assert "sparkfabric: mtu REJECTED" in html.read_text()
    for path in (html, results):
        assert oct(path.stat().st_mode & 0o777) == "0o600", path
