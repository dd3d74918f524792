"""A cluster whose hosts do not answer, over the real ssh transport: the whole suite fails fast,
every item with one line. A closed port is refused at once; a silent drop (a veth whose peer has
no address, in a user and network namespace of its own: `unshare -rn`) costs one connect timeout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_sparkfabric.results import Results, read
from tests.transport.conftest import free_port

# Each runs the whole suite against a cluster that does not answer.
pytestmark = pytest.mark.slow

LIMIT_S = 60.0
SILENT_SETUP = (
    "ip link set lo up && ip link add sfv0 type veth peer name sfv1 && "
    "ip addr add 10.255.0.1/24 dev sfv0 && ip link set sfv0 up && ip link set sfv1 up && "
    "ip neigh add 10.255.0.11 lladdr 02:00:00:00:00:11 dev sfv0 nud permanent && "
    "ip neigh add 10.255.0.12 lladdr 02:00:00:00:00:12 dev sfv0 nud permanent"
)


def _cluster(path: Path, hosts: list[tuple[str, int]]) -> Path:
    nodes = "".join(
        f"  - name: spark-{i}\n"
        f"    ssh: {{host: {host}, port: {port}, user: nobody}}\n"
        f"    ports: {{1: [192.168.100.1{i}/24, 192.168.101.1{i}/24]}}\n"
        for i, (host, port) in enumerate(hosts, 1)
    )
    # No soak settings: the default 600 s soak must not run against nodes that do not answer.
    path.write_text(f"topology: direct\ntransport: ssh\nnodes:\n{nodes}")
    return path


def _run(tmp: Path, cluster: Path, wrap: list[str]) -> tuple[float, Results, str]:
    results = tmp / "results.json"
    argv = [
        *wrap,
        sys.executable, "-m", "pytest", f"--cluster={cluster}",
        "-p", "no:cacheprovider", "-p", "no:randomly", f"--sparkfabric-json={results}",
    ]  # fmt: skip
    t0 = time.monotonic()
    r = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=300, check=False)
    seconds = time.monotonic() - t0
    # Nothing answered: we could not look, so the run is INCOMPLETE, not REJECTED.
    assert r.returncode == 10, r.stdout[-3000:] + r.stderr[-3000:]
    return seconds, read(results), r.stdout


def _assert_every_item_not_measured_with_one_line(doc: Results, reason: str) -> None:
    assert doc.verdict == "incomplete" and doc.items
    for item in doc.items:
        assert (item.outcome, item.rule) == ("not_measured", "node_unreachable"), item
        message = (item.message or "").strip()
        assert "\n" not in message and reason in message, (item.id, message)
        assert item.objects, item.id  # every item sits on its node or rail
    # One root cause per node, nothing blamed on the hardware.
    assert [(c.rule, c.objects) for c in doc.causes] == [
        ("node_unreachable", ("spark-1",)),
        ("node_unreachable", ("spark-2",)),
    ]
    ids = " ".join(i.id for i in doc.items)
    assert "test_soak.py" in ids and "test_nccl.py::test_nccl_busbw" in ids


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh)")
def test_refused_connections_fail_the_whole_suite_at_once(tmp_path: Path) -> None:
    cluster = _cluster(
        tmp_path / "refused.yaml", [("127.0.0.1", free_port()), ("127.0.0.1", free_port())]
    )
    seconds, tests, out = _run(tmp_path, cluster, [])
    assert seconds < LIMIT_S, out[-3000:]
    _assert_every_item_not_measured_with_one_line(tests, "ssh: connection refused")
    assert "2 of 2 nodes not reachable; their tests are not measured" in out
    # The terminal names the cause once per node, and lists no test as FAILED.
    assert "1. [node_unreachable] spark-1: the node cannot be logged into" in out
    assert "seen: spark-2: ssh: connection refused" in out
    assert "During handling" not in out and "Traceback" not in out
    assert not [line for line in out.splitlines() if line.startswith("FAILED test_")]


def _silent_wrap() -> list[str] | None:
    if shutil.which("unshare") is None or shutil.which("ssh") is None:
        return None
    probe = subprocess.run(["unshare", "-rn", "sh", "-c", SILENT_SETUP], capture_output=True)
    if probe.returncode != 0:
        return None
    return ["unshare", "-rn", "sh", "-c", f'{SILENT_SETUP} && exec "$@"', "sh"]


SILENT = _silent_wrap()


@pytest.mark.skipif(
    SILENT is None, reason="needs unshare -rn (user + network namespaces), iproute2 and ssh"
)
def test_silently_dropped_connections_cost_one_connect_timeout(tmp_path: Path) -> None:
    assert SILENT is not None
    cluster = _cluster(tmp_path / "silent.yaml", [("10.255.0.11", 22), ("10.255.0.12", 22)])
    seconds, tests, out = _run(tmp_path, cluster, SILENT)
    assert seconds < LIMIT_S, out[-3000:]
    _assert_every_item_not_measured_with_one_line(tests, "ssh: connection timed out after 10 s")
