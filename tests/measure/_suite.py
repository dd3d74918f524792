"""Run the shipped measurement tests in-process against simulated clusters (pytester)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MEASURE = "bandwidth or tcp or nccl or soak"
# The soak goes last: a marginal cable's link stays down once it dropped.
FILES = ("test_bandwidth.py", "test_tcp.py", "test_nccl.py", "test_soak.py")


@dataclass(frozen=True)
class Run:
    outcomes: dict[str, str]
    messages: dict[str, str]
    props: dict[str, dict[str, str]]
    stdout: str

    @property
    def failed(self) -> set[str]:
        return {k for k, v in self.outcomes.items() if v != "passed"}


def run(pytester: pytest.Pytester, cluster: Path, *args: str) -> Run:
    out = pytester.path / "results.json"
    if out.exists():
        out.unlink()
    suite = [str(ROOT / "acceptance" / f) for f in FILES]
    result = pytester.runpytest_inprocess(
        "--cluster",
        str(cluster),
        "-m",
        MEASURE,
        "-p",
        "no:cacheprovider",
        "--sparkfabric-json",
        str(out),
        *args,
        *suite,
    )
    data: dict[str, Any] = json.loads(out.read_text())
    outcomes, messages, props = {}, {}, {}
    for t in data["tests"]:
        key = t["nodeid"].split("::")[-1]
        outcomes[key] = t["outcome"]
        messages[key] = t["message"] or ""
        props[key] = t["properties"]
    return Run(outcomes, messages, props, result.stdout.str())


def cluster_file(
    directory: Path,
    base: str,
    *,
    faults: list[dict[str, Any]] | None = None,
    changes: dict[str, Any] | None = None,
) -> Path:
    """An example (or fault example) with its faults replaced and top-level keys changed."""
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / base).read_text())
    if faults is not None:
        data["simulate"] = {**(data.get("simulate") or {}), "faults": faults}
    for key, value in (changes or {}).items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    path = directory / "cluster.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
