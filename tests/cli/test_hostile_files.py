"""Hostile or damaged files given to the commands are clean errors (issue 22 item 8): a results
document nested too deeply or too large (a baseline of that kind: tests/plugin/test_plugin.py),
a saved output holding nan or inf figures. No traceback, no RecursionError; exit 4 (or 2 for
`explain`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_sparkfabric import results

NESTED = '{"version": 2, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest_sparkfabric.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("command", [["report", "html"], ["report", "diff", "OLD"]])
def test_nested_json_is_a_clean_error(tmp_path: Path, command: list[str]) -> None:
    bad = tmp_path / "nested.json"
    bad.write_text(NESTED)
    args = [str(bad) if a == "OLD" else a for a in command]
    r = _cli(*args, str(bad))
    assert r.returncode == 4, r.stderr
    assert f"{bad}: not JSON (recursion limit exceeded" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_huge_document_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "MAX_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_text(" " * 2000)
    with pytest.raises(results.ResultsError, match="2000 bytes, more than a results document"):
        results.read(big)


def test_a_linked_document_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("{}")
    (tmp_path / "link.json").symlink_to(target)
    with pytest.raises(results.ResultsError, match="cannot read it"):
        results.read(tmp_path / "link.json")


def test_explain_refuses_figures_that_are_not_finite(tmp_path: Path) -> None:
    saved = tmp_path / "iperf3.json"
    big = '{"bits_per_second": 1e999}'
    saved.write_text(f'{{"start": {{}}, "end": {{"sum_sent": {big}, "sum_received": {big}}}}}')
    r = _cli("explain", str(saved))
    assert r.returncode == 2
    assert f"{saved}: holds a figure that is not a finite number (nan or inf)" in r.stderr
