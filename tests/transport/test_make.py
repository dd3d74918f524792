"""make_transport: what cluster.yaml says about ssh reaches the ssh transport."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.transport import make_transport
from pytest_sparkfabric.transport.record import RecordingTransport
from pytest_sparkfabric.transport.ssh import SshTransport

SSH_CLUSTER = """\
topology: direct
transport: ssh
{extra}
nodes:
  - name: spark-1
    ssh: {{host: 10.0.0.11}}
    ports:
      1: [192.168.100.11/24, 192.168.101.11/24]
  - name: spark-2
    ssh: {{host: 10.0.0.12}}
    ports:
      1: [192.168.100.12/24, 192.168.101.12/24]
"""


def _ssh(tmp_path: Path, extra: str, record: Path | None = None) -> SshTransport:
    cluster = parse_cluster(
        SSH_CLUSTER.format(extra=extra), source="c.yaml", path=tmp_path / "c.yaml"
    )
    t = make_transport(cluster, record_dir=record)
    inner = t.inner if isinstance(t, RecordingTransport) else t
    assert isinstance(inner, SshTransport)
    return inner


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("~/x", os.path.expanduser("~/x")),
        ("ssh/cfg", "{dir}/ssh/cfg"),
        ("/etc/ssh/ssh_config", "/etc/ssh/ssh_config"),
    ],
)
def test_ssh_config_expands_home_and_is_relative_to_the_cluster_file(
    tmp_path: Path, value: str, expected: str
) -> None:
    t = _ssh(tmp_path, f"ssh_config: {value}")
    argv = t.ssh_argv("spark-1", "true")
    t.close()
    assert argv[argv.index("-F") + 1] == expected.format(dir=tmp_path)


def test_the_output_cap_comes_from_the_cluster_file(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    t = _ssh(tmp_path, "output_cap_mib: 2", record=rec)
    t.close()
    assert t.output_cap_bytes == 2 * 2**20
    assert _ssh(tmp_path, "").output_cap_bytes == 16 * 2**20
