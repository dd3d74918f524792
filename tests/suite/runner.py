"""The one runner of whole-suite tests: the shipped suite, in process through pytester, against a
simulated (or replayed) cluster, read back from its JSON results."""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import pkgutil
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# numpy (under matplotlib: the HTML report's charts) cannot be imported twice in a process, and
# pytester puts sys.modules back after each test: loaded before any pytester fixture, they stay.
import matplotlib.figure  # noqa: F401
import numpy  # noqa: F401
import pytest
import yaml

# Imported here, before any in-process run: pytester drops the modules a run imported when it
# ends, while the plugin's package keeps references to them, so a later run would mix two
# copies of a module (and of its stash keys and classes).
import pytest_sparkfabric.diagnosis.causes
import pytest_sparkfabric.fixtures
import pytest_sparkfabric.measure.localize
import pytest_sparkfabric.measure.witness
import pytest_sparkfabric.session
import pytest_sparkfabric.verdict  # noqa: F401
import sparkfabric_sim

# The simulator too, every module: its tool registry, filled on first use, would otherwise keep
# one run's tools, bound to that run's copy of the file system model, into the next run.
for _m in pkgutil.walk_packages(sparkfabric_sim.__path__, "sparkfabric_sim."):
    importlib.import_module(_m.name)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SUITE = ROOT / "acceptance"
CONFIG = "links or mtu or addressing or ipv6 or nccl_env or switch or qos"
"""The configuration checks: seconds on any cluster."""
MEASURE = "bandwidth or tcp or nccl or soak"
"""The measurements: bandwidth rounds, NCCL and the heat soak."""
MEASURE_FILES = ("test_bandwidth.py", "test_tcp.py", "test_nccl.py", "test_soak.py")
SHORT_SOAK: dict[str, Any] = {"soak": {"duration_s": 60, "interval_s": 10}}
MATRIX = ROOT / "tests" / "data" / "matrix.json"
"""The fault matrix's pins: per example (test_matrix.py) and per lab fault (`lab/NAME`)."""


def pin(name: str, seen: Any) -> Any:
    """The pinned entry of `name`, rewritten first to `seen` under SPARKFABRIC_UPDATE_PINS (under
    a lock: the matrix runs in parallel); `seen` None only reads."""
    with open(MATRIX.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pins = json.loads(MATRIX.read_text())
        if os.environ.get("SPARKFABRIC_UPDATE_PINS") and seen is not None:
            pins[name] = seen
            MATRIX.write_text(json.dumps(dict(sorted(pins.items())), indent=1) + "\n")
    return pins.get(name)


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: per test (name[id], module dropped) its outcome (not measured counts
    as failed), message and properties; `doc` is the results document as written."""

    ret: int
    outcomes: dict[str, str]
    messages: dict[str, str]
    props: dict[str, dict[str, str]]
    stdout: str
    doc: dict[str, Any]

    @classmethod
    def of(cls, ret: int, stdout: str, doc: dict[str, Any]) -> SuiteRun:
        rows = {it["id"].split("::")[-1]: it for it in doc["items"]}
        return cls(
            ret,
            {
                k: "failed" if t["outcome"] == "not_measured" else t["outcome"]
                for k, t in rows.items()
            },
            {k: t.get("message") or "" for k, t in rows.items()},
            {k: t.get("properties", {}) for k, t in rows.items()},
            stdout,
            doc,
        )

    @property
    def failed(self) -> set[str]:
        return {k for k, v in self.outcomes.items() if v == "failed"}

    @property
    def not_passed(self) -> set[str]:
        """Failed or skipped: where a skip would be a check passing by omission."""
        return {k for k, v in self.outcomes.items() if v != "passed"}

    def failures(self) -> str:
        """The FAILURES section of the run's output (why each failed test failed)."""
        start, end = self.stdout.find("= FAILURES ="), self.stdout.find("short test summary info")
        return self.stdout[start:end] if start >= 0 else self.stdout[-3000:]


def says(message: str, props: Mapping[str, str], words: str) -> bool:
    """Whether a check's message or properties say `words`: `name=value` a property starting
    so (`name==value`: being it), `^...` the message starting so (`^...$`: being it), `~` a
    regex found in it, `!` words not in it, else words in it."""
    key, _, value = words.partition("=")
    if key in props:
        return props[key] == value[1:] if value[:1] == "=" else props[key].startswith(value)
    if words[0] == "~":
        return re.search(words[1:], message) is not None
    if words[0] == "^":
        return message == words[1:-1] if words[-1] == "$" else message.startswith(words[1:])
    return words[1:] not in message if words[0] == "!" else words in message


def run_suite(
    pytester: pytest.Pytester,
    cluster: Path,
    *args: str,
    markers: str | None = None,
    files: Sequence[str] = (),
    plugins: Sequence[object] = (),
) -> SuiteRun:
    """Run the suite (`files` of acceptance/ only, else all of it; `markers` as with -m) on
    `cluster`; extra pytest arguments in `args`."""
    out = pytester.path / "results.json"
    out.unlink(missing_ok=True)
    argv = [f"--cluster={cluster}", "-p", "no:cacheprovider", f"--sparkfabric-json={out}"]
    argv += ["-m", markers] if markers else []
    paths = [str(SUITE / f) for f in files]
    result = pytester.runpytest_inprocess(*argv, *args, *paths, plugins=list(plugins))
    return SuiteRun.of(int(result.ret), result.stdout.str(), json.loads(out.read_text()))


def run_measurements(pytester: pytest.Pytester, cluster: Path, *args: str) -> SuiteRun:
    """The measurement files only (bandwidth, TCP, NCCL, soak)."""
    return run_suite(pytester, cluster, *args, markers=MEASURE, files=MEASURE_FILES)


def write_cluster(
    directory: Path,
    base: str,
    *,
    faults: list[dict[str, Any]] | None = None,
    nodes: int | None = None,
    changes: Mapping[str, Any] | None = None,
    name: str = "cluster.yaml",
) -> Path:
    """An example (or fault example, `faults/x.yaml`), optionally cut to its first `nodes`
    nodes, its faults replaced, and top-level keys changed (a mapping merged one level deep)."""
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / base).read_text())
    if nodes is not None:
        data["nodes"] = data["nodes"][:nodes]
        kept = {n["name"] for n in data["nodes"]}
        if sw := data.get("switch"):
            sw["ports"] = {k: v for k, v in sw["ports"].items() if k in kept}
    if faults is not None:
        data["simulate"] = {**(data.get("simulate") or {}), "faults": faults}
    for key, value in (changes or {}).items():
        merge = isinstance(value, dict) and isinstance(data.get(key), dict)
        data[key] = {**data[key], **value} if merge else value
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
