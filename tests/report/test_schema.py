"""The results document's schema: hand-built documents validate, broken ones say where, the
command prints it and the docs page is generated from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.report.schema import (
    VERSION,
    is_valid,
    problems,
    reference_markdown,
    results_schema,
)
from tests.report.sample import Faults, document

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("topology", "n"), [("direct", 2), ("mesh", 3), ("ring", 4), ("ring", 9), ("switch", 8)]
)
def test_hand_built_documents_of_every_topology_validate(topology: str, n: int) -> None:
    doc = document(topology, n, Faults(bad_cable=0, throttled=1, unmeasured=True))
    assert problems(doc) == []


def test_a_document_survives_a_json_round_trip() -> None:
    doc = document("switch", 4)
    assert is_valid(json.loads(json.dumps(doc)))


def test_problems_name_the_path_and_what_is_wrong() -> None:
    doc = document("direct", 2)
    doc["verdict"] = "ok"
    doc["items"][3]["outcome"] = "error"
    del doc["cables"][0]["a"]["node"]
    doc["started"] = "yesterday"
    found = problems(doc)
    assert "at verdict: 'ok' is not one of ['accepted', 'rejected', 'incomplete']" in found
    assert any(p.startswith("at items[3].outcome: 'error' is not one of") for p in found)
    assert "at cables[0].a: 'node' is a required property" in found
    assert any(p.startswith("at started: 'yesterday' does not match") for p in found)
    assert len(found) == 4


def test_unknown_fields_and_a_wrong_version_are_refused() -> None:
    doc = document("direct", 2)
    doc["extra"] = 1
    doc["version"] = VERSION + 1
    found = problems(doc)
    assert any("'extra' was unexpected" in p for p in found)
    assert any(p.startswith("at version:") for p in found)


def test_not_an_object_at_all() -> None:
    assert problems([1, 2]) == ["at the top level: [1, 2] is not of type 'object'"]


def test_schema_command_prints_the_results_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--results"]) == 0
    assert json.loads(capsys.readouterr().out) == results_schema()


def test_the_cluster_schema_is_still_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert "sparkfabric results" not in capsys.readouterr().out


def test_docs_page_is_generated_from_the_schema() -> None:
    page = (ROOT / "docs" / "results-json.md").read_text()
    assert page == reference_markdown(), (
        "docs/results-json.md is stale: sparkfabric schema --results --format markdown "
        "> docs/results-json.md"
    )


def test_every_field_is_described() -> None:
    def walk(node: object, path: str) -> list[str]:
        if not isinstance(node, dict):
            return []
        out = []
        for name, prop in node.get("properties", {}).items():
            if "description" not in prop and "items" not in prop:
                out.append(f"{path}.{name}")
            out += walk(prop, f"{path}.{name}")
            out += walk(prop.get("items"), f"{path}.{name}[]")
        out += walk(node.get("additionalProperties"), f"{path}.*")
        return out

    assert walk(results_schema(), "") == []
