"""A recorded run replays to the same verdicts (hosts and switch alike)."""

from __future__ import annotations

import pytest
import yaml

from tests.suite.runner import CONFIG, run_suite, write_cluster

pytestmark = pytest.mark.slow


def test_replay_gives_the_same_verdicts(pytester: pytest.Pytester) -> None:
    live = write_cluster(
        pytester.path,
        "demo.yaml",
        nodes=3,
        faults=[{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}],
    )
    record = pytester.path / "recording"
    first = run_suite(pytester, live, "--sparkfabric-record", str(record), markers=CONFIG)
    assert first.failed  # a run with failures and diagnoses, not only passes
    assert (record / "spark-1.jsonl").is_file()
    assert (record / "switch" / "rest.jsonl").is_file()

    data = yaml.safe_load(live.read_text())
    data.pop("simulate")
    data.update(transport="replay", replay_dir="recording")
    replay = pytester.path / "replay.yaml"
    replay.write_text(yaml.safe_dump(data, sort_keys=False))
    second = run_suite(pytester, replay, markers=CONFIG)

    assert second.outcomes == first.outcomes
    assert second.props == first.props
    assert second.messages == first.messages
