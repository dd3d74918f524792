"""What a run prints: few progress lines that say when time is simulated, a soak figure against
its limit; what nodes print is shown, never obeyed (ANSI escapes, NUL, carriage returns are
shown as `\\x1b` and the like: issue 22 item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.report.banner import Terminal
from pytest_sparkfabric.session import EXIT_INCOMPLETE
from sparkfabric_sim.transport import SimTransport
from tests.suite.runner import write_cluster

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_simulated_run_prints_few_lines_in_simulated_time(pytester: pytest.Pytester) -> None:
    ten_min = {"soak": {"duration_s": 600, "interval_s": 10}}
    cluster = write_cluster(pytester.path, "demo.yaml", changes=ten_min, name="demo.yaml")
    result = pytester.runpytest_inprocess(f"--cluster={cluster}", "-p", "no:html")
    assert result.ret == 0
    lines = result.outlines
    verdict = lines.index(next(ln for ln in lines if " sparkfabric verdict " in ln))
    # The verdict comes last, once, after pytest's own summary sections.
    banner = [ln for ln in lines[verdict + 1 :] if ln.strip()]
    assert banner[0].startswith("sparkfabric: ACCEPTED  demo: switch, 4 nodes, "), banner
    progress = [ln for ln in lines[:verdict] if re.match(r"sparkfabric[ :(]", ln)]
    header, *rest = [ln for ln in progress if not re.fullmatch(r"sparkfabric [.FNW]+.*", ln)]
    assert header.startswith("sparkfabric: demo.yaml: switch, 4 nodes, transport sim")
    assert rest and all(ln.startswith("sparkfabric (simulated time): ") for ln in rest), rest
    # A phase says what it does and how long it would take; rounds and samples are not listed.
    assert len(rest) <= 8, "\n".join(rest)
    assert not [ln for ln in rest if re.search(r"round \d+/\d+:|soak 0 s", ln)]
    soak = [ln for ln in rest if ln.split(": ", 1)[1].startswith("soak ")]
    assert len(soak) == 1
    assert re.fullmatch(
        r"sparkfabric \(simulated time\): soak 10 min of 10 min \(100%\), "
        r"hottest NIC \d+ C, hottest GPU \d+ C, "
        r"fastest lane [\d.]+ errors/s \(spark-\d:rail\d lane \d\)",
        soak[0],
    ), soak[0]


def test_round_lines_only_where_time_is_real_and_a_replay_says_so() -> None:
    assert Terminal(None, "replay").prefix == "sparkfabric (replayed)"  # type: ignore[arg-type]
    assert Terminal(None, "ssh").prefix == "sparkfabric"  # type: ignore[arg-type]
    text = (ROOT / "examples" / "direct-2.yaml").read_text()
    sim = parse_cluster(text)
    text = text.replace("transport: sim", "transport: ssh")
    for n in (1, 2):
        text = text.replace(
            f"  - name: spark-{n}\n", f"  - name: spark-{n}\n    ssh: {{host: h{n}}}\n"
        )
    for cluster, shown in ((sim, ["phase"]), (parse_cluster(text), ["phase", "round 1/3"])):
        lines: list[str] = []
        fabric = Fabric(cluster, SimTransport(sim), progress=lines.append)
        fabric.progress("phase")
        fabric.detail("round 1/3")
        assert lines == shown


HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mboom\x00\x7f"


def test_escapes_from_a_node_are_shown_not_obeyed(pytester: pytest.Pytester) -> None:
    live = write_cluster(pytester.path, "direct-2.yaml")
    record = pytester.path / "rec"
    first = pytester.runpytest_inprocess(f"--cluster={live}", "-m", "links", "-p", "no:html",
                                         f"--sparkfabric-record={record}")  # fmt: skip
    assert first.ret == 0
    # The node's ethtool now fails, saying something hostile on stderr.
    path = record / "spark-1.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    hostile = {"rc": 1, "stdout": "", "stderr": HOSTILE}
    lines = [
        {**e, **hostile} if e["command"].startswith("ethtool enp1s0f1np1") else e for e in lines
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    data = yaml.safe_load(live.read_text())
    data.pop("simulate", None)
    data.update(transport="replay", replay_dir=str(record))
    replay = pytester.path / "replay.yaml"
    replay.write_text(yaml.safe_dump(data))

    result = pytester.runpytest_inprocess(f"--cluster={replay}", "-m", "links", "-p", "no:html")
    out = result.stdout.str()
    assert result.ret == EXIT_INCOMPLETE  # a tool that fails to run is "not measured"
    assert not {"\x1b", "\x07", "\x00", "\x7f"} & set(out)
    assert (
        "spark-1: ethtool failed (rc 1): \\x1b]0;owned\\x07\\x1b[2J\\x1b[31mboom\\x00\\x7f" in out
    )
