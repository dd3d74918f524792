"""Every sample in tests/data parses to the expected JSON beside it (tests/probes/golden.py), with
the parser ``sparkfabric parse`` uses for its tool; the checks after it keep the layout honest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_sparkfabric.probes import PARSERS, outcome_to_json

from . import golden

SAMPLES = golden.raw_samples


@pytest.mark.parametrize("raw", SAMPLES, ids=golden.sample_id)
def test_sample_parses_to_its_expected_json(raw: Path) -> None:
    tool = raw.parent.name
    got = outcome_to_json(PARSERS[tool], golden.read(raw))
    expected = golden.expected_path(raw)
    if os.environ.get(golden.UPDATE_ENV):
        expected.write_text(got, encoding="utf-8")
    assert expected.exists(), (
        f"{golden.sample_id(raw)} has no expected parse beside it: run "
        f"{golden.UPDATE_ENV}=1 pytest tests/probes/test_golden.py, then review "
        f"{expected.name} against the folder's PROVENANCE.md"
    )
    assert json.loads(got) == json.loads(expected.read_text(encoding="utf-8"))


def test_folders_and_registered_parsers_are_the_same_tools() -> None:
    """So the folder names pin ``PARSERS``' keys: a parser comes with its real sample."""
    folders = {f.name for f in golden.sample_folders()}
    real = {p.parent.name for p in golden.real_samples}
    assert sorted(folders - set(PARSERS)) == [], "tests/data folders naming no parser in PARSERS"
    assert sorted(set(PARSERS) - real) == [], "parsers without a real sample in tests/data"


@pytest.mark.parametrize("folder", golden.sample_folders(), ids=lambda p: p.name)
def test_every_sample_has_provenance(folder: Path) -> None:
    provenance = folder / "PROVENANCE.md"
    assert provenance.exists(), f"tests/data/{folder.name} has no PROVENANCE.md"
    text = provenance.read_text(encoding="utf-8")
    unlisted = [p.name for p in golden.raw_files(folder) if p.name not in text]
    assert unlisted == [], f"tests/data/{folder.name}/PROVENANCE.md does not list {unlisted}"


def test_no_expected_file_without_its_sample() -> None:
    orphans = [
        str(p.relative_to(golden.DATA))
        for folder in golden.sample_folders()
        for p in folder.glob(f"*{golden.EXPECTED_SUFFIX}")
        if not any(golden.expected_path(r) == p for r in golden.raw_files(folder))
    ]
    assert orphans == []
