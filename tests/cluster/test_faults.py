"""The fault registry is the one list: every entry has its injector, its lab plan (or says it is
simulated only) and its example, which says what it injects and what should fail (its field
reference row is generated from it: tests/cli/test_config.py keeps docs/cluster-yaml.md in step)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.cluster.faults import _TABLE, FAULTS, TARGETS, FaultName
from pytest_sparkfabric.cluster.spec import FaultSpec
from sparkfabric_lab.faultplan import APPLY
from sparkfabric_sim.inject import INJECTORS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "faults"

FAULT_NAMES = get_args(FaultName)


def test_the_table_has_one_row_per_name_whose_targets_are_the_fields_of_a_fault() -> None:
    assert [f.name for f in _TABLE] == list(FAULT_NAMES)
    # No injector, lab plan or example outside the registry.
    assert set(INJECTORS) <= set(FAULTS) and set(APPLY) <= set(FAULTS)
    assert {p.stem for p in EXAMPLES.glob("*.yaml")} == set(FAULTS)
    assert all(FAULTS[name].name == name for name in FAULT_NAMES)
    assert set(TARGETS) == set(FaultSpec.model_fields) - {"fault"}
    for f in FAULTS.values():
        assert not set(f.required) & set(f.allowed), f.name


@pytest.mark.parametrize("name", FAULT_NAMES)
def test_every_fault_is_simulated_has_its_example_and_a_lab_plan_or_is_simulated_there(
    name: FaultName,
) -> None:
    assert name in INJECTORS
    assert (name in APPLY) == (FAULTS[name].lab == "real")
    cluster = load_cluster(EXAMPLES / f"{name}.yaml")
    assert cluster.spec.simulate is not None
    assert [f.fault for f in cluster.spec.simulate.faults] == [name]
    # It says what it injects and what should fail.
    text = (EXAMPLES / f"{name}.yaml").read_text()
    assert text.startswith(f"# Fault: {name}.") and "Should" in text.split("topology:")[0]


@pytest.mark.parametrize(
    ("name", "usage"),
    [
        ("link_down", "write {fault: link_down, node: ...} (optional: port)"),
        ("switch_cpu_forwarding", "write {fault: switch_cpu_forwarding}"),
        (
            "lane_degradation",
            "write {fault: lane_degradation, node: ..., lane: ...} "
            "(optional: port, onset_c, rate_per_s)",
        ),
    ],
)
def test_usage_tells_the_targets(name: FaultName, usage: str) -> None:
    assert FAULTS[name].usage() == usage


def test_the_lab_page_tells_every_fault_as_the_registry_has_it() -> None:
    page = (ROOT / "docs" / "lab.md").read_text(encoding="utf-8")
    section = page.split("## Faults, for real", 1)[1].split("\n## ", 1)[0]
    told: dict[str, list[str]] = {}
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        names, how = row.strip("|").split(" | ", 1)
        for name in re.findall(r"`(\w+)`", names):
            told.setdefault(name, []).append(how.strip(" |"))
    assert set(told) == set(FAULTS)
    for name, fault in FAULTS.items():
        simulated = told[name] == ["simulated (the node's hardware tools)"]
        assert simulated == (fault.lab == "simulated"), (name, told[name])
