"""What users' own checks import from `pytest_sparkfabric`, and that the plugin stays cheap:
the names are imported on first use, not when pytest loads the plugin; and the plugin uses
pytest's public API only (no `_pytest` import, no private attribute of pytest's objects)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pytest_sparkfabric
from pytest_sparkfabric.cluster import Cluster, Node, Rail
from pytest_sparkfabric.cluster.plan import DirectedLink, Link, NodePair
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.results import Results
from pytest_sparkfabric.transport import Job, RunResult
from pytest_sparkfabric.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]

FACE = {
    thing.__name__: thing
    for thing in (Cluster, Node, Rail, Results, Link, DirectedLink, NodePair, Fabric, Measured,
                  NotMeasured, Job, RunResult, Verdict)
}  # fmt: skip


def test_every_name_is_the_real_thing() -> None:
    assert set(pytest_sparkfabric.__all__) == {*FACE, "__version__"}
    for name, value in FACE.items():
        assert getattr(pytest_sparkfabric, name) is value, name
    assert pytest_sparkfabric.__version__
    with pytest.raises(AttributeError, match="has no attribute 'Fabrik'"):
        pytest_sparkfabric.Fabrik  # noqa: B018


def test_loading_the_plugin_imports_none_of_them() -> None:
    code = (
        "import sys, pytest_sparkfabric, pytest_sparkfabric.plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('pytest_sparkfabric')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(out.stdout)
    assert set(loaded) <= {
        "pytest_sparkfabric",
        "pytest_sparkfabric.plugin",
        "pytest_sparkfabric.session",
        "pytest_sparkfabric.outcome",
    }, loaded


def test_the_readme_own_check_runs(pytester: pytest.Pytester) -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    own = next(b for b in blocks if "reach.ping(fabric, link)" in b)
    pytester.makepyfile(test_own=textwrap.dedent(own))
    cluster = ROOT / "examples" / "direct-2.yaml"
    result = pytester.runpytest_inprocess(f"--cluster={cluster}", "test_own.py", "-p", "no:html")
    result.assert_outcomes(passed=5)  # 4 links and sparkfabric::verdict


PRIVATE = re.compile(
    r"\b_pytest\b|\b(?:config|session|item|items|report|reporter|terminalreporter|tw|request|"
    r"metafunc|pluginmanager|parser|callspec|capture|xml)\._[a-zA-Z]"
)


def test_no_private_pytest_anywhere_in_the_product() -> None:
    files = [*ROOT.glob("pytest_sparkfabric/**/*.py"), *ROOT.glob("acceptance/*.py")]
    assert files
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert found == []
