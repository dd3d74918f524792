"""Run the shipped suite through pytester against simulated clusters and read its verdicts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# The configuration checks of this issue; the measurement tests (bandwidth, nccl, soak) stay off.
CONFIG = "links or mtu or addressing or ipv6 or nccl_env or switch"


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: per test (name[id], module dropped) its outcome, message, props."""

    ret: int
    outcomes: dict[str, str]
    messages: dict[str, str]
    props: dict[str, dict[str, str]]
    stdout: str

    def with_outcome(self, outcome: str) -> set[str]:
        return {k for k, v in self.outcomes.items() if v == outcome}

    @property
    def failed(self) -> set[str]:
        return self.with_outcome("failed")


def _short(nodeid: str) -> str:
    return nodeid.split("::")[-1]


def run_suite(
    pytester: pytest.Pytester,
    cluster: Path,
    *args: str,
    markers: str | None = CONFIG,
    plugins: Sequence[object] = (),
) -> SuiteRun:
    out = pytester.path / "results.json"
    if out.exists():
        out.unlink()
    argv = ["--cluster", str(cluster), "-p", "no:cacheprovider", "--sparkfabric-json", str(out)]
    if markers:
        argv += ["-m", markers]
    result = pytester.runpytest_inprocess(*argv, *args, plugins=list(plugins))
    data: dict[str, Any] = json.loads(out.read_text())
    outcomes, messages, props = {}, {}, {}
    for t in data["tests"]:
        key = _short(t["nodeid"])
        outcomes[key] = t["outcome"]
        messages[key] = t["message"] or t["skip_reason"] or ""
        props[key] = t["properties"]
    return SuiteRun(int(result.ret), outcomes, messages, props, result.stdout.str())


def write_cluster(
    directory: Path,
    base: str,
    *,
    faults: list[dict[str, Any]] | None = None,
    nodes: int | None = None,
    name: str = "cluster.yaml",
    **changes: Any,
) -> Path:
    """An example cluster, optionally cut to its first `nodes` nodes, with faults injected."""
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / base).read_text())
    if nodes is not None:
        data["nodes"] = data["nodes"][:nodes]
        kept = {n["name"] for n in data["nodes"]}
        if data.get("switch"):
            data["switch"]["ports"] = {
                k: v for k, v in data["switch"]["ports"].items() if k in kept
            }
    if faults is not None:
        data.setdefault("simulate", {})
        data["simulate"] = {**(data["simulate"] or {}), "faults": faults}
    data.update(changes)
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
