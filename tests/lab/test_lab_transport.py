"""SshTransport against a real sshd in a lab node: deadlines end the remote command too,
megabytes of stderr do not block, an unreachable node fails fast with one line."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sparkfabric.transport import Job, Transport
from tests.lab import labkit

pytestmark = labkit.lab_marks()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[labkit.Lab]:
    tmp = tmp_path_factory.mktemp("transport")
    path = labkit.cluster_file(
        tmp, "direct-2", faults=[{"fault": "node_unreachable", "node": "spark-2"}]
    )
    with labkit.lab_of(path) as lab:
        yield lab


@pytest.fixture
def transport(lab: labkit.Lab) -> Iterator[Transport]:
    t = lab.transport()
    yield t
    t.close()


def _sleeps(lab: labkit.Lab) -> list[str]:
    return [p for ps in labkit.strays_after(lab, 3).values() for p in ps if "sleep" in p]


def test_a_command_past_its_deadline_is_ended_on_the_node(
    lab: labkit.Lab, transport: Transport
) -> None:
    t0 = time.monotonic()
    r = transport.run(Job("spark-1", "sleep 300", timeout_s=2))
    assert r.timed_out and r.failure() is not None
    assert time.monotonic() - t0 < 10
    assert _sleeps(lab) == []


def test_a_stopped_background_command_is_ended_on_the_node(
    lab: labkit.Lab, transport: Transport
) -> None:
    bg = transport.start(Job("spark-1", "sleep 100", timeout_s=60))
    time.sleep(0.5)
    assert any("sleep 100" in p for ps in lab.stray_processes().values() for p in ps)
    bg.stop()
    assert _sleeps(lab) == []


def test_five_megabytes_of_stderr_do_not_block(transport: Transport) -> None:
    t0 = time.monotonic()
    r = transport.run(
        Job("spark-1", "head -c 5000000 /dev/zero | tr '\\0' x >&2; echo done", timeout_s=30)
    )
    assert r.ok and r.stdout == "done\n"
    assert len(r.stderr) == 5_000_000
    assert time.monotonic() - t0 < 15


def test_an_unreachable_node_fails_fast_with_one_line(transport: Transport) -> None:
    t0 = time.monotonic()
    results = transport.run_many([Job("spark-2", f"echo {i}", timeout_s=10) for i in range(3)])
    assert time.monotonic() - t0 < 5
    assert {r.transport_error for r in results} == {"spark-2: ssh: connection refused"}
    assert all(r.rc == 255 and r.failure() == r.transport_error for r in results)


def test_closing_the_transport_leaves_no_session(lab: labkit.Lab, tmp_path: Path) -> None:
    t = lab.transport()
    assert t.run(Job("spark-1", "true", 5)).ok
    t.close()
    assert labkit.strays_after(lab) == {}
