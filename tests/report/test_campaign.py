"""A simulated cable acceptance campaign read as its users read it: three runs of one ring
(healthy; spark-2's two cables swapped, examples/faults/cable_swapped.yaml; fixed), the swapped
run's pytest-html report (in Chromium, and JUnit XML as a CI dashboard parses it:
tests/suite/test_report.py), `sparkfabric cables` over the three and `report diff` between them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.report.diff import compare, text
from pytest_sparkfabric.results import Results, read

SWAPPED = Path(__file__).resolve().parents[2] / "examples" / "faults" / "cable_swapped.yaml"
RUNS = ("1-healthy", "2-swapped", "3-fixed")
HEAD = ["serial", "date", "cluster", "cable as it ran", "worst BER", "RDMA", "verdict", "file"]


def _run(folder: Path, name: str) -> None:
    """One whole simulated run in its own process; it writes `name`.json and .html."""
    data = yaml.safe_load(SWAPPED.read_text())
    if name != "2-swapped":
        del data["simulate"]["faults"]
    work = folder / name
    work.mkdir()
    (work / "lab.yaml").write_text(yaml.safe_dump(data))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CI"))}
    argv = ["--cluster=lab.yaml", f"--sparkfabric-json={work}.json"]
    argv += [f"--html={work}.html", "--self-contained-html", "-p", "no:cacheprovider", "-q"]
    cmd = [sys.executable, "-m", "pytest", *argv]
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == (1 if name == "2-swapped" else 0), done.stdout[-3000:]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("campaign")
    for name in RUNS:
        _run(folder, name)
    (folder / "notes.json").write_text('{"not": "results"}')
    return folder


def _doc(campaign: Path, name: str) -> Results:
    return read(campaign / f"{name}.json")


def test_cables_lists_every_run_of_each_serial(
    campaign: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cables", str(campaign)]) == 0
    out, err = capsys.readouterr()
    assert f"skipped {campaign / 'notes.json'}: not a sparkfabric results document" in err
    head, *rows = out.splitlines()
    assert re.split(r"\s{2,}", head) == HEAD
    assert len(rows) == 4 * 3
    serials = [r.split()[0] for r in rows[::3]]  # a serial once, its other runs indented
    assert serials == sorted(serials) and all(
        r.startswith(" ") for i, r in enumerate(rows) if i % 3
    )
    wrong = [r for r in rows if "planned" in r]
    assert len(wrong) == 2 and all("2-swapped.json" in r and " failed " in r for r in wrong)
    assert any("spark-1:p0<->spark-2:p0 (planned spark-1:p0<->spark-2:p1)" in r for r in wrong)
    assert any("spark-3:p1<->spark-2:p1 (planned spark-2:p0<->spark-3:p1)" in r for r in wrong)
    healthy = [r for r in rows if "1-healthy.json" in r or "3-fixed.json" in r]
    assert len(healthy) == 8 and all(re.search(r" [\d.]+ Gb/s +passed ", r) for r in healthy)


def test_a_named_file_that_is_not_results_is_a_usage_error(
    campaign: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cables", str(campaign / "notes.json")]) == 4
    assert capsys.readouterr().err.startswith(f"sparkfabric cables: {campaign / 'notes.json'}: ")


def test_report_diff_names_both_moves_with_both_ends(campaign: Path) -> None:
    healthy, swapped, fixed = (_doc(campaign, n) for n in RUNS)
    moves = [ln for ln in text(compare(healthy, swapped)).splitlines() if " moved " in ln]
    assert [re.sub(r"cable \S+ ", "cable SN ", ln) for ln in moves] == [
        "  cable SN moved from spark-1:p0<->spark-2:p1 to spark-1:p0<->spark-2:p0",
        "  cable SN moved from spark-2:p0<->spark-3:p1 to spark-3:p1<->spark-2:p1",
    ]
    back = [ln for ln in text(compare(swapped, fixed)).splitlines() if " moved " in ln]
    assert len(back) == 2 and "to spark-1:p0<->spark-2:p1" in back[0]


def test_the_swapped_run_report_draws_and_lists_the_wrong_cables(campaign: Path) -> None:
    page = (campaign / "2-swapped.html").read_text()
    assert "sparkfabric: lab REJECTED</title>" in page
    wrong = re.findall(
        r'<g class="sf-cable" [^>]*data-status="fail"[^>]*data-found="([^"]+)"', page
    )
    assert sorted(wrong) == ["spark-1:p0 &lt;-&gt; spark-2:p0", "spark-3:p1 &lt;-&gt; spark-2:p1"]
    rows = re.findall(
        r'<tr class="sf-cable-row" [^>]*data-cable="([^"]+)" data-status="(\w+)"', page
    )
    failed = ["spark-1:p0&lt;-&gt;spark-2:p1", "spark-2:p0&lt;-&gt;spark-3:p1"]
    assert [c for c, status in rows if status == "fail"] == failed
    assert page.count('class="sf-wrong"') == 2 and len(rows) == 4
