"""What nodes print reaches the terminal visible, never obeyed: ANSI escapes, title-setting
sequences, NUL and carriage returns in a tool's output are shown as `\\x1b` and the like, in
failure messages, progress lines and the verdict's causes alike (issue 22 item 5)."""

from __future__ import annotations

import json

import pytest
import yaml

from pytest_sparkfabric.session import EXIT_INCOMPLETE
from tests.suite.runner import write_cluster

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
    for entry in lines:
        if entry["command"].startswith("ethtool enp1s0f1np1"):
            entry.update(rc=1, stdout="", stderr=HOSTILE)
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
