"""Two runs compared: new failures, fixed items, figures beyond the tolerance, cables that moved,
and `sparkfabric report diff`'s text and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.report.diff import compare, text
from pytest_sparkfabric.results import Results
from tests.report.sample import Faults, document

Raw = dict[str, Any]


def _doc(faults: Faults | None = None, **kw: Any) -> Results:
    return document("ring", 4, faults, soak_minutes=1, **kw)


def _raw(faults: Faults | None = None) -> Raw:
    return _doc(faults).model_dump(mode="json")


def _r(raw: Raw) -> Results:
    return Results.model_validate(raw)


def _write(tmp_path: Path, name: str, doc: Results | Raw) -> str:
    raw = doc.model_dump(mode="json") if isinstance(doc, Results) else doc
    (tmp_path / name).write_text(json.dumps(raw))
    return str(tmp_path / name)


def test_a_bad_cable_shows_as_new_failures_bandwidth_and_ber_each_group_counted() -> None:
    d = compare(_doc(), _doc(Faults(bad_cable=1)))
    assert d.regression and d.regressions == 4 + 2 + 2
    assert sorted(c.id for c in d.new_failures) == [
        "test_bandwidth.py::test_rail_rdma[spark-2:p0rail1->spark-3:p1rail1]",
        "test_bandwidth.py::test_rail_rdma[spark-3:p1rail1->spark-2:p0rail1]",
        "test_soak.py::test_lanes[spark-2:p0rail1]",
        "test_soak.py::test_lanes[spark-3:p1rail1]",
    ]
    assert all(c.before == "passed" and c.after == "failed" for c in d.new_failures)
    assert [(f.subject, f.after, f.regression) for f in d.bandwidth] == [
        ("spark-2:p0rail1->spark-3:p1rail1", 0.3, True),
        ("spark-3:p1rail1->spark-2:p0rail1", 0.3, True),
    ]
    assert [f.subject for f in d.ber] == ["spark-2:p0rail1", "spark-3:p1rail1"]
    out = text(d, "old.json", "new.json")
    assert out.splitlines()[:6] == [
        "sparkfabric report diff old.json -> new.json: REGRESSED: 8 regressions",
        "new failures (4):",
        "  test_bandwidth.py::test_rail_rdma[spark-2:p0rail1->spark-3:p1rail1] (was passed)",
        "  test_bandwidth.py::test_rail_rdma[spark-3:p1rail1->spark-2:p0rail1] (was passed)",
        "  test_soak.py::test_lanes[spark-2:p0rail1] (was passed)",
        "  test_soak.py::test_lanes[spark-3:p1rail1] (was passed)",
    ]
    assert "bandwidth beyond the tolerance (2):" in out
    assert "  rdma_gbps spark-2:p0rail1->spark-3:p1rail1: 95.6 -> 0.3 Gb/s (-100%)" in out
    assert "BER beyond the factor (2):" in out
    assert "  ber_max spark-2:p0rail1: 1.5e-11 -> 2.9e-05" in out


def test_fixing_is_no_regression_and_lists_what_was_fixed() -> None:
    d = compare(_doc(Faults(bad_cable=1)), _doc())
    assert not d.regression and len(d.fixed) == 4 and "fixed (4):" in text(d)
    assert all(not f.regression for f in (*d.bandwidth, *d.ber))
    assert compare(_doc(name="a"), _doc(name="b")).notes == (
        "the runs are of different clusters: a and b",
    )


def test_not_measured_now_is_a_regression_but_failed_then_not_measured_is_not_new() -> None:
    d = compare(_doc(), _doc(Faults(unmeasured=True)))
    assert d.regression
    assert [c.id for c in d.newly_not_measured] == [
        "test_soak.py::test_cable[spark-1:p0<->spark-2:p1]"
    ]
    assert [c.before for c in d.newly_not_measured] == [None]  # a new item, not run before
    old, new = _raw(), _raw()
    old["items"][0]["outcome"] = "failed"
    new["items"][0]["outcome"] = "not_measured"
    assert not compare(_r(old), _r(new)).regression


def _ber(doc: Results, value: float) -> Results:
    raw = doc.model_dump(mode="json")
    for m in raw["measurements"]:
        if m["kind"] == "ber_max":
            m["value"] = value
    return _r(raw)


def test_ber_within_the_healthy_trickle_is_no_change() -> None:
    assert compare(_ber(_doc(), 0.0), _doc()).ber == ()  # 0 -> 1.5e-11
    assert compare(_ber(_doc(), 0.0), _ber(_doc(), 9e-8)).ber == ()  # under 10 x the floor
    changes = compare(_ber(_doc(), 0.0), _ber(_doc(), 2e-7)).ber
    assert len(changes) == 16 and all(c.regression for c in changes)
    assert compare(_ber(_doc(), 2e-7), _ber(_doc(), 1e-6), ber_factor=10).ber == ()
    assert len(compare(_ber(_doc(), 0.0), _ber(_doc(), 2e-9), ber_floor=1e-10).ber) == 16


def test_cables_known_by_serial_moved_and_changed() -> None:
    d = compare(_doc(), _doc(Faults(swap_serial=True)))
    assert not d.regression
    out = text(d)
    assert out.splitlines()[1:] == [
        "cables (2):",
        "  cable APF00000001 moved from spark-1:p0<->spark-2:p1 to spark-2:p0<->spark-3:p1",
        "  cable APF00000002 moved from spark-2:p0<->spark-3:p1 to spark-1:p0<->spark-2:p1",
    ]
    for index, serial, says in (
        (0, "NEW1", "cable at spark-1:p0<->spark-2:p1: serial APF00000001 -> NEW1"),
        (3, None, "cable at spark-4:p0<->spark-1:p1: serial APF00000004 no longer read"),
    ):
        new = _raw()
        new["cables"][index]["a"]["serial"] = new["cables"][index]["b"]["serial"] = serial
        assert says in text(compare(_doc(), _r(new)))


def test_cli_exit_codes_options_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path, "good.json", _doc())
    bad = _write(tmp_path, "bad.json", _doc(Faults(bad_cable=1)))
    assert main(["report", "diff", good, good]) == 0
    assert capsys.readouterr().out == f"sparkfabric report diff {good} -> {good}: no regression\n"
    assert main(["report", "diff", good, bad]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"sparkfabric report diff {good} -> {bad}: REGRESSED: 8 regressions\n")
    new = _raw()
    first = next(m for m in new["measurements"] if m["kind"] == "rdma_gbps")
    first["value"] = round(first["value"] * 0.93, 1)
    b = _write(tmp_path, "b.json", new)
    assert main(["report", "diff", good, b]) == 0  # 7% lower: within the default 10%
    assert capsys.readouterr().out.endswith(": no regression\n")
    assert main(["report", "diff", "--bw-tolerance", "5", "--json", good, b]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["regression"] is True
    assert [(f["after"], f["regression"]) for f in result["bandwidth"]] == [(first["value"], True)]
    with pytest.raises(SystemExit) as exc:
        main(["report", "diff", "--bw-tolerance", "-3", "a", "b"])
    assert exc.value.code == 2
    assert "-3 must be above 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it: No such file or directory"),
        ("{not json", ": not JSON (key must be a string at line 1 column 2)"),
        ('{"verdict": "accepted"}', ": not a sparkfabric results document:\n  cluster: Field"),
        (b"\xff\xfe", ": not JSON (expected value at line 1 column 1)"),
        (
            '{"verdict": "accepted", "items": [{"id": "x", "outcome": "maybe"}]}',
            "  items.0.outcome: Input should be 'passed', 'warned', 'failed' or 'not_measured'\n"
            "  Fix: give a file written by pytest --sparkfabric-json PATH (its schema: sparkfabric "
            "schema --results)\n",
        ),
    ],
)
def test_cli_bad_input_is_a_usage_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes | None, message: str
) -> None:
    good = _write(tmp_path, "good.json", _doc())
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["report", "diff", good, str(bad)]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"sparkfabric report diff: {bad}")
    assert message in err


def test_cli_html_writes_one_page_and_defaults_are_the_comparison_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path, "old.json", _doc())
    new = _write(tmp_path, "new.json", _doc(Faults(bad_cable=1)))
    out = tmp_path / "report.html"
    assert main(["report", "html", new, "-o", str(out), "--baseline", old]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert 'data-verdict="rejected"' in page
    assert '<section class="sf-baseline" data-regression="true">' in page
    # The command's defaults are the comparison's.
    from pytest_sparkfabric.cli import report as cli
    from pytest_sparkfabric.report import diff

    defaults = ("BW_TOLERANCE_PCT", "BER_FACTOR", "BER_FLOOR")
    assert [getattr(cli, k) for k in defaults] == [getattr(diff, k) for k in defaults]
