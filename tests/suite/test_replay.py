"""A recorded run replays to the same verdicts (hosts and switch, over REST and over SSH)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from pytest_sparkfabric.transport.record import SWITCH_RECORDING, SWITCH_SSH_RECORDING
from tests.suite.runner import CONFIG, run_suite, write_cluster

pytestmark = pytest.mark.slow

MTU = [{"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}]
FCS = [{"fault": "switch_fcs_errors", "switch_port": "qsfp56-dd-1-5"}]


@pytest.mark.parametrize(
    ("changes", "faults", "markers", "switch_file"),
    [
        ({}, MTU, CONFIG, SWITCH_RECORDING),
        ({"switch": {"api": "ssh"}}, FCS, "switch or bandwidth", SWITCH_SSH_RECORDING),
    ],
    ids=["rest", "ssh"],
)
def test_replay_gives_the_same_verdicts(
    pytester: pytest.Pytester,
    changes: dict[str, Any],
    faults: list[dict[str, Any]],
    markers: str,
    switch_file: str,
) -> None:
    live = write_cluster(pytester.path, "demo.yaml", nodes=3, faults=faults, changes=changes)
    record = pytester.path / "recording"
    first = run_suite(pytester, live, "--sparkfabric-record", str(record), markers=markers)
    assert first.failed  # a run with failures and diagnoses, not only passes
    assert (record / "spark-1.jsonl").is_file() and (record / switch_file).is_file()

    data = yaml.safe_load(live.read_text())
    data.pop("simulate")
    data.update(transport="replay", replay_dir="recording")
    replay = pytester.path / "replay.yaml"
    replay.write_text(yaml.safe_dump(data, sort_keys=False))
    second = run_suite(pytester, replay, markers=markers)

    assert second.outcomes == first.outcomes
    assert second.props == first.props
    assert second.messages == first.messages
