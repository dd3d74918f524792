"""The plugin's public face: what users' checks import from `pytest_sparkfabric` (imported on
first use, not when pytest loads the plugin: tests/report/test_charts.py); pytest's public API
only; a guest in every pytest run: pytest's help, markers and fixtures listings work with it,
with and without --cluster."""

from __future__ import annotations

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
DEMO = ROOT / "examples" / "demo.yaml"
OPTIONS = {
    "--cluster=PATH": "cluster.yaml describing the fabric",
    "--sparkfabric-record=DIR": "write every command each node ran",
    "--sparkfabric-json=PATH": "write every measurement and verdict as JSON",
    "--sparkfabric-baseline=OLD_JSON": "more than 10% below it fail",
    "--sparkfabric-strict": "fail a check that passes with a warning",
}


@pytest.mark.parametrize("cluster", [(), (f"--cluster={DEMO}",)], ids=["inert", "with-cluster"])
@pytest.mark.parametrize("what", ["--help", "--markers", "--fixtures"])
def test_pytest_listings_work(tmp_path: Path, what: str, cluster: tuple[str, ...]) -> None:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *cluster, what]
    r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback (most recent call last)" not in r.stdout + r.stderr
    if what == "--help":
        # Every option of ours, with its help text whole (argparse expands % in help texts).
        text = re.sub(r"\s+", " ", r.stdout)
        for option, words in OPTIONS.items():
            assert option in text and words in text, option
    if what == "--markers" and cluster:
        assert "@pytest.mark.bandwidth: RDMA loopback, rail and pair bandwidth" in r.stdout
    if what == "--fixtures":  # the plugin's fixtures only where it is active
        listed = "node_pair" in r.stdout, "verdict" in r.stdout
        assert listed == ((True, True) if cluster else (False, False))


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
