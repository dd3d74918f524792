"""The wheel's package list matches the source tree, and a wheel runs the suite from anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "pytest_sparkfabric").rglob("__init__.py")
    }
    assert found | {"pytest_sparkfabric.acceptance"} == listed


@pytest.mark.skipif(not os.environ.get("CI"), reason="builds a wheel and a venv: run in CI only")
def test_wheel_in_a_venv_runs_the_shipped_suite_from_an_empty_dir(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    wheel = next(wheels.glob("*.whl"))
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
        check=True,
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run(
        [str(py), "-c", "import pytest_sparkfabric.plugin as p; print(p.suite_dir())"],
        cwd=empty,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(venv)), where
    demo = ROOT / "examples" / "direct-2.yaml"
    run = subprocess.run(
        [str(py), "-m", "pytest", f"--cluster={demo}", "-q", "-p", "no:cacheprovider", "-m", "mtu"],
        cwd=empty,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed" in run.stdout
