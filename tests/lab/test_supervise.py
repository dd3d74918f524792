"""The supervisor every simulated tool runs under in the lab (no root needed)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparkfabric_lab.supervise import DEFAULT_PORT, server_port

SUPERVISE = [sys.executable, "-m", "sparkfabric_lab.supervise"]
READY = "print('ready', flush=True)\n"


@pytest.mark.parametrize(
    ("args", "port"),
    [
        (["-d", "rocep1s0f1", "-F", "--report_gbits", "-q", "4", "-D", "2", "-p", "18516"], 18516),
        (["-d", "rocep1s0f1", "-F", "--report_gbits"], DEFAULT_PORT),
        (["-d", "rocep1s0f1", "--port=18600", "-x", "3"], 18600),
        (["-d", "rocep1s0f1", "-p", "18516", "198.19.0.12"], None),
        (["-d", "rocep1s0f1", "198.19.0.12", "-q", "4"], None),
    ],
)
def test_server_port(args: list[str], port: int | None) -> None:
    assert server_port(args) == port


def _start(tmp_path: Path, script: str, *extra: str) -> subprocess.Popen[str]:
    """The supervisor over a Python tool, once the tool says it is ready."""
    child = tmp_path / "tool.py"
    child.write_text(script)
    p = subprocess.Popen([*SUPERVISE, *extra[:1], "--", sys.executable, str(child), *extra[1:]],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    assert p.stdout is not None and p.stdout.readline() == "ready\n"
    return p


_HANDLER = f"""
import signal, sys, time
seen = []
def h(signum, frame):
    seen.append(signum)
    print("TERM", len(seen), flush=True)
    time.sleep(0.3)  # a slow clean-up: a second signal now would find it mid-way
    sys.exit(143)
signal.signal(signal.SIGTERM, h)
{READY}time.sleep(60)
"""


def test_a_group_signal_reaches_the_tool_once(tmp_path: Path) -> None:
    p = _start(tmp_path, _HANDLER)
    os.killpg(p.pid, signal.SIGTERM)  # as the plugin does ...
    os.killpg(p.pid, signal.SIGTERM)  # ... and as `timeout` does once more
    assert p.communicate(timeout=10)[0] == "TERM 1\n" and p.returncode == 143


@pytest.mark.slow
def test_a_tool_that_ignores_term_is_killed_after_the_grace(tmp_path: Path) -> None:
    p = _start(tmp_path, f"import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                         f"{READY}time.sleep(60)\n")  # fmt: skip
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGTERM)
    p.communicate(timeout=10)
    assert 1.5 < time.monotonic() - t0 < 6 and p.returncode == 128 + signal.SIGKILL


@pytest.mark.slow
def test_the_tool_dies_with_its_supervisor(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    p = _start(tmp_path, f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
                         f"{READY}time.sleep(60)\n")  # fmt: skip
    child = int(pidfile.read_text())
    p.kill()  # SIGKILL: no chance to pass anything on
    p.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the supervised tool outlived its supervisor")


def test_a_perftest_server_holds_its_port(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = _start(tmp_path, f"import time\n{READY}time.sleep(60)\n", "--perftest", "--",
               "ib_write_bw", "-d", "rocep1s0f1", "-p", str(port))  # fmt: skip
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate(timeout=10)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
