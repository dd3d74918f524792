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
        for top in ("pytest_sparkfabric", "sparkfabric_sim", "sparkfabric_lab")
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert found | {"pytest_sparkfabric.acceptance"} == listed


@pytest.mark.skipif(not os.environ.get("CI"), reason="builds a wheel and a venv: run in CI only")
def test_wheel_in_a_venv_runs_the_shipped_suite_from_an_empty_dir(tmp_path: Path) -> None:
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    wheel = str(next(wheels.glob("*.whl")))
    install = [str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", wheel]
    subprocess.run(install, check=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    code = "import pytest_sparkfabric.plugin as p; print(p.suite_dir())"
    where = subprocess.run([str(py), "-c", code], cwd=empty, capture_output=True, text=True).stdout
    assert where.startswith(str(venv)), where
    demo = ROOT / "examples" / "direct-2.yaml"
    argv = [str(py), "-m", "pytest", f"--cluster={demo}", "-p", "no:cacheprovider"]
    run = subprocess.run([*argv, "-q", "-m", "mtu"], cwd=empty, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed" in run.stdout


def _readme_commands() -> list[str]:
    """The indented command lines of the README's Quick start section."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_readme_quick_start_installs_into_a_venv_it_creates_as_ci_does() -> None:
    install, tests = _readme_commands()
    # A stock Debian/Ubuntu python3 refuses `pip install` outside a venv (PEP 668): the same
    # command line must create the venv and use it for pip and pytest.
    steps = [s.strip() for s in install.split("&&")]
    assert steps[0] == "python3 -m venv .venv"
    assert steps[1] == ". .venv/bin/activate"
    assert steps[2].startswith("pip install -e '.[dev]'")
    assert steps[3].startswith("pytest --cluster=examples/demo.yaml")
    assert tests == '.venv/bin/python -m pytest -n auto -m "not lab"'  # the fast tier
    # CI runs that test command in its own venv.
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv .venv" in ci
    assert ".venv/bin/python -m pip install" in ci
    assert "python3 -m pip install" not in ci
    lines = [ln.strip() for ln in ci.splitlines() if ln.strip() and not ln.startswith("#")]
    assert tests in lines  # the fast tier, then the lab tier (root only)
    assert lines[lines.index(tests) + 2] == ".venv/bin/python -m pytest -n 0 -m lab"


def test_lint_and_type_tools_are_pinned_exactly() -> None:
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = {req.split("==")[0]: req for req in dev["dev"] if "==" in req}
    assert {"ruff", "mypy", "types-PyYAML"} <= set(pins), dev["dev"]


def test_version_flag_prints_the_installed_version() -> None:
    from importlib.metadata import version

    argv = [sys.executable, "-m", "pytest_sparkfabric.cli", "--version"]
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"sparkfabric {version('pytest-sparkfabric')}"


_MANAGED = sorted(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED"))


@pytest.mark.skipif(
    not os.environ.get("SPARKFABRIC_INSTALL_CHECK") or not _MANAGED,
    reason="clones the repo and installs it from the package index: set "
    "SPARKFABRIC_INSTALL_CHECK=1 on a Debian/Ubuntu machine with python3-venv",
)
def test_readme_install_works_on_an_externally_managed_python(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    env.pop("VIRTUAL_ENV", None)
    pip = ["python3", "-m", "pip", "install", "--dry-run", "pyyaml"]
    refused = subprocess.run(pip, cwd=clone, env=env, capture_output=True, text=True)
    assert "externally-managed-environment" in refused.stderr  # the case the README is for
    install, _ = _readme_commands()
    r = subprocess.run(
        ["sh", "-c", install], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert (clone / "report.html").is_file()
    assert " passed" in r.stdout
