"""The plugin is a guest in every pytest run where it is installed: pytest's own help, markers and
fixtures listings work with it, with and without --cluster, and every option's help renders."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"
OPTIONS = {
    "--cluster=PATH": "cluster.yaml describing the fabric",
    "--sparkfabric-record=DIR": "write every command each node ran",
    "--sparkfabric-json=PATH": "write every measurement and verdict as JSON",
    "--sparkfabric-baseline=OLD_JSON": "more than 10% below it fail",
    "--sparkfabric-strict": "fail a check that passes with a warning",
}


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("cluster", [(), (f"--cluster={DEMO}",)], ids=["inert", "with-cluster"])
@pytest.mark.parametrize("what", ["--help", "--markers", "--fixtures"])
def test_pytest_listings_work(tmp_path: Path, what: str, cluster: tuple[str, ...]) -> None:
    r = _pytest(*cluster, what, cwd=tmp_path)
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
