"""`sparkfabric explain` on saved outputs, and `parse` of a missing file (what `parse` prints
of each sample: tests/probes/test_golden.py against the golden files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
PLAYBOOK_1 = DATA / "ib_write_bw/ib_write_bw-gb10-nvidia-playbook-client1-run-infinitely-92.57.txt"
PLAYBOOK_2 = DATA / "ib_write_bw/ib_write_bw-gb10-nvidia-playbook-client2-run-infinitely-97.28.txt"
NCCL = DATA / "nccl-tests/gb10-dell-promax-all-gather-16G.txt"


def test_parse_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "ping", str(tmp_path / "nope.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_explain_healthy_pair_of_rails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(PLAYBOOK_1), str(PLAYBOOK_2)]) == 0
    out = capsys.readouterr().out
    assert "92.6 Gb/s" in out and "97.3 Gb/s" in out
    assert "No known fault signature" in out


def test_explain_throttled_loopback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = re.sub(r"92\.5\d", "13.02", PLAYBOOK_1.read_text())
    # Make it a loopback: the remote GID is the local one.
    text = text.replace("255:255:192:168:200:12", "255:255:192:168:200:13")
    f = tmp_path / "loop.txt"
    f.write_text(text)
    assert main(["explain", str(f)]) == 1
    out = capsys.readouterr().out
    assert "loopback" in out and "throttled" in out
    assert "unplug power for 60 s" in out


def test_explain_half_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = tmp_path / "rail1.txt"
    dead.write_text(PLAYBOOK_2.read_text().replace("97.28", "0.31").replace("97.29", "0.31"))
    assert main(["explain", str(PLAYBOOK_1), str(dead)]) == 1
    assert "only one of the port's two" in capsys.readouterr().out


def test_explain_nccl_socket(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "nccl.txt"
    log.write_text(
        "spark-1:4242:4250 [0] NCCL INFO NET/IB : No device found.\n"
        "spark-1:4242:4250 [0] NCCL INFO NET/Socket : Using [0]enp1s0f1np1:192.168.100.11<0>\n"
        "spark-1:4242:4250 [0] NCCL INFO Using network Socket\n"
        + NCCL.read_text().replace("22.9611", "2.1")
    )
    assert main(["explain", str(log)]) == 1
    out = capsys.readouterr().out
    assert "fell back to TCP" in out and "NCCL_NET=Socket" in out


def test_explain_unrecognised_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "x.txt"
    f.write_text("hello\n")
    assert main(["explain", str(f)]) == 2
    assert "not an output of" in capsys.readouterr().err
