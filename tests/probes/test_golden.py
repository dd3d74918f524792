"""Every sample in tests/data parses to the expected JSON beside it (tests/probes/golden.py), with
the parser ``sparkfabric parse`` uses for its tool, and the CLI prints that JSON; the checks after
it keep the layout honest; a parser that cannot decide says what it expected and what it found."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.probes import PARSERS, ParseError, found_text, to_json

from . import golden

SAMPLES = golden.raw_samples


@pytest.mark.parametrize("raw", SAMPLES, ids=golden.sample_id)
def test_sample_parses_to_its_expected_json_and_the_cli_prints_it(
    raw: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = raw.parent.name
    try:
        got = to_json(PARSERS[tool](golden.read(raw)))
    except ParseError as err:  # an error-path golden file pins the message an operator reads
        got = to_json(
            {"parse_error": {"tool": err.tool, "missing": err.missing, "found": err.found}}
        )
    expected = golden.expected_path(raw)
    if os.environ.get(golden.UPDATE_ENV):
        expected.write_text(got, encoding="utf-8")
        pytest.skip(f"wrote {expected.name}: review its diff, then run without {golden.UPDATE_ENV}")
    assert expected.exists(), (
        f"{golden.sample_id(raw)} has no expected parse beside it: run "
        f"{golden.UPDATE_ENV}=1 pytest tests/probes/test_golden.py, then review "
        f"{expected.name} against the folder's PROVENANCE.md"
    )
    text = expected.read_text(encoding="utf-8")
    pinned = json.loads(text)
    assert json.loads(got) == pinned
    rc = main(["parse", tool, str(raw)])
    if not (isinstance(pinned, dict) and "parse_error" in pinned):
        assert (rc, *capsys.readouterr()) == (0, text, "")
    else:
        said = ParseError(**pinned["parse_error"])
        stderr = f"sparkfabric parse: {raw} is not {tool} output: {said}\n"
        assert (rc, *capsys.readouterr()) == (2, "", stderr)


def test_folders_and_registered_parsers_are_the_same_tools() -> None:
    """So the folder names pin ``PARSERS``' keys: a parser comes with its real sample."""
    folders = {f.name for f in golden.sample_folders()}
    real = {p.parent.name for p in golden.real_samples}
    assert sorted(folders - set(PARSERS)) == [], "tests/data folders naming no parser in PARSERS"
    assert sorted(set(PARSERS) - real) == [], "parsers without a real sample in tests/data"


@pytest.mark.parametrize("folder", golden.sample_folders(), ids=lambda p: p.name)
def test_every_sample_has_provenance_and_every_expected_file_its_sample(folder: Path) -> None:
    provenance = folder / "PROVENANCE.md"
    assert provenance.exists(), f"tests/data/{folder.name} has no PROVENANCE.md"
    text = provenance.read_text(encoding="utf-8")
    unlisted = [p.name for p in golden.raw_files(folder) if p.name not in text]
    assert unlisted == [], f"tests/data/{folder.name}/PROVENANCE.md does not list {unlisted}"
    expected = {golden.expected_path(r) for r in golden.raw_files(folder)}
    orphans = [p.name for p in folder.glob(f"*{golden.EXPECTED_SUFFIX}") if p not in expected]
    assert orphans == [], f"tests/data/{folder.name}: expected files without a sample"


# Parsers that never raise: ping classifies any text (an unreadable run is verdict "error"),
# and an nccl.conf with no KEY=VALUE line is a valid, empty configuration.
TOTAL = {"ping", "nccl-conf"}


@pytest.mark.parametrize("tool", sorted(set(PARSERS) - TOTAL))
def test_parse_error_says_expected_and_found(tool: str) -> None:
    text = "bash: command not found\n"
    with pytest.raises(ParseError) as err:
        PARSERS[tool](text)
    message = str(err.value)
    assert err.value.missing and err.value.found, message
    assert "command not found" in message, message


def test_found_text_quotes_first_or_last_line() -> None:
    assert found_text("") == "empty output"
    assert found_text("\n \n") == "only blank lines"
    assert found_text("a\nb\n") == "'a' (+1 more lines)"
    assert found_text("a\r\nb\n", last=True) == "2 lines ending with 'b'"
    assert found_text("x" * 200).endswith("...'") and len(found_text("x" * 200)) == 122


def test_the_cli_reads_stdin_bytes_untouched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crlf = golden.DATA / "iperf3/gke-iperf3.6-ctrlc-crlf-interrupt-error-partial-end.json"
    monkeypatch.setattr("sys.stdin", type("Stdin", (), {"buffer": crlf.open("rb")}))
    assert main(["parse", "iperf3", "-"]) == 0
    assert capsys.readouterr() == (golden.expected_path(crlf).read_text(encoding="utf-8"), "")
