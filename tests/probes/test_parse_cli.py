"""`sparkfabric parse TOOL FILE` prints the golden files' JSON (each sample's values are pinned
once, by tests/probes/test_golden.py): from a file or stdin, bytes untouched (CR LF), and an
error-path sample as exit 2 with what was expected and what was found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main

from . import golden

CRLF = golden.DATA / "iperf3/gke-iperf3.6-ctrlc-crlf-interrupt-error-partial-end.json"
CLI_SAMPLES = [
    CRLF,
    golden.DATA / "ib_write_bw/roce-couldnt-connect-old-merged-error-line.txt",
    golden.DATA / "iperf3/gke-iperf3.9-reverse-R-truncated-at-8192-bytes.json",
]


@pytest.mark.parametrize("raw", CLI_SAMPLES, ids=golden.sample_id)
def test_cli_prints_the_golden_json(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tool = raw.parent.name
    rc = main(["parse", tool, str(raw)])
    out, err = capsys.readouterr()
    expected = golden.expected_path(raw).read_text(encoding="utf-8")
    error = json.loads(expected).get("parse_error")
    if error is None:
        assert (rc, out, err) == (0, expected, "")
    else:
        assert rc == 2 and out == ""
        assert err.startswith(f"sparkfabric parse: {raw} is not {tool} output: {error['tool']}: ")
        assert error["missing"] in err and (error["found"] or "") in err


def test_cli_reads_stdin_bytes_untouched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class _Stdin:
        buffer = CRLF.open("rb")

    monkeypatch.setattr("sys.stdin", _Stdin)
    assert main(["parse", "iperf3", "-"]) == 0
    assert capsys.readouterr().out == golden.expected_path(CRLF).read_text(encoding="utf-8")
