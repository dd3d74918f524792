"""The report in a real browser: headless Chromium renders a page built by every renderer, with
the network blocked, and the page must show the banner and its SVG with no console message.

Skipped where Chromium is missing (`.ci/run` installs Debian's `chromium`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from pytest_sparkfabric.report import page
from pytest_sparkfabric.report.diff import Baseline
from tests.report.sample import Faults, document

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH: the report's browser test needs it (apt-get install chromium)",
)
# Chromium writes each page console message to stderr as `...:INFO:CONSOLE:1] "text", source:`
# (older builds: `CONSOLE(1)`), whatever the level; the report holds no script, so any is wrong.
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]? ?(.*)")
BANNER_RED = (0xB7, 0x1C, 0x1C)


def chromium(tmp_path: Path, html: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    quiet = "--disable-background-networking --disable-component-update --disable-sync"
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *quiet.split()]
    args += ["--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    # Any request leaving the machine fails (and shows on the console): the page is offline.
    args += ["--proxy-server=http://127.0.0.1:9", "--enable-logging=stderr", "--v=0"]
    args += [*extra, html.as_uri()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def _console(stderr: str) -> list[str]:
    return [m.group(1) for line in stderr.splitlines() if (m := CONSOLE.search(line))]


def shown(tmp_path: Path, html: Path) -> str:
    """The page's DOM as Chromium built it, with nothing said on its console."""
    run = chromium(tmp_path, html, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    assert _console(run.stderr) == []
    return run.stdout


def painted(tmp_path: Path, html: Path, *extra: str) -> Image.Image:
    """The page painted (RGB), with nothing said on its console."""
    shot = tmp_path / "report.png"
    run = chromium(tmp_path, html, f"--screenshot={shot}", *extra)
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    assert _console(run.stderr) == []
    with Image.open(shot) as image:
        return image.convert("RGB")


def test_the_console_check_sees_what_chromium_reports(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><svg><rect width="5" height="5/"/></svg>'
        '<script>console.error("boom")</script><img src="https://example.com/x.png"></body></html>'
    )
    run = chromium(tmp_path, bad, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    found = _console(run.stderr)
    assert any('"boom"' in line for line in found), run.stderr[-3000:]
    assert any("height" in line for line in found), run.stderr[-3000:]


def test_the_report_renders_its_banner_and_svg_paints_the_verdict_colour_and_is_silent(
    tmp_path: Path,
) -> None:
    old = document("mesh", 3, soak_minutes=3)
    new = document("mesh", 3, Faults(bad_cable=1, throttled=0, hostile=True), soak_minutes=3)
    report_page = tmp_path / "report.html"
    report_page.write_text(page(new, baseline=Baseline("last-month.json", old)))
    assert not re.search(r'(?:src|href)="(?:https?:)?//', report_page.read_text()), "it fetches"
    dom = shown(tmp_path, report_page)
    assert '<span class="sf-verdict-word">REJECTED</span>' in dom
    assert "2 root causes explain" in dom
    assert '<section class="sf-baseline" data-regression="true">' in dom
    assert len(re.findall(r'<svg\b[^>]*\bclass="sf-fabric"', dom)) == 1
    assert len(re.findall(r'<svg\b[^>]*\bclass="sf-chart-svg"', dom)) == 5
    assert dom.count('class="sf-node"') == 3 and dom.count('class="sf-cable"') == 3
    assert dom.count('class="sf-cable-row"') == 3
    # Tool output with markup stayed text: no element was made from it.
    assert "<script" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    rgb = painted(tmp_path, report_page, "--window-size=1200,1600", "--hide-scrollbars")
    assert rgb.getpixel((600, 10)) == BANNER_RED
    colours = rgb.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # charts and picture were painted
