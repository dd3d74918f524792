"""The simulator prints the real tools' layouts: checked against the real samples in tests/data
(the renderers' lines one by one, ping's among them: tests/probes/test_sim_outputs.py)."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.render.iperf3 import document
from sparkfabric_sim.transport import SimTransport
from tests.probes.golden import sample
from tests.sim.conftest import EXAMPLES, PLAYBOOK, out, sim


class _Pairs(dict[str, Any]):
    """A JSON object that keeps duplicate keys, as iperf 3.6 printed them."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    def items(self) -> Any:
        return self.pairs

    def __len__(self) -> int:
        return len(self.pairs)


def test_cjson_printer_reproduces_a_real_iperf3_document_byte_for_byte() -> None:
    text = sample("iperf3/json-P4-60s-mininet-iperf3.6-duplicate-keys.txt")
    assert document(json.loads(text, object_pairs_hook=_Pairs)) == text


def test_ibdev2netdev_matches_the_nvidia_playbook_output_byte_for_byte() -> None:
    text = sample("ibdev2netdev/gb10-nvidia-playbook-spark-5c2d.txt")
    spec_text = (EXAMPLES / "direct-2.yaml").read_text().replace("      1: [", "      0: [")
    assert out(SimTransport(parse_cluster(spec_text)), "spark-1", "ibdev2netdev") == text


def _fields_end(line: str) -> list[int]:
    return [m.end() for m in re.finditer(r"\S+", line)]


def test_nccl_tests_layout_matches_the_gb10_all_gather_sample() -> None:
    real = sample("nccl-tests/gb10-dell-promax-all-gather-16G.txt").splitlines()
    cmd = (
        "mpirun --allow-run-as-root -np 2 -H 192.168.100.11:1,192.168.100.12:1 "
        f"{PLAYBOOK}all_gather_perf -b 16G -e 16G -f 2 -g 1"
    )
    got = out(sim(), "spark-1", cmd, timeout=900).splitlines()
    assert got[:2] == real[:2] and got[3:5] == real[3:5] and got[7:11] == real[7:11]
    assert got[2].replace("warmup iters: 1", "") == real[2].replace("warmup iters: 1", "")
    rank = r"#  Rank  \d Group  0 Pid +\d+ on +\S+ device  0 \[000f:01:00\] NVIDIA GB10"
    assert re.fullmatch(rank, got[5]) and re.fullmatch(rank, got[6])
    assert _fields_end(got[11]) == _fields_end(real[11]) and got[12] == real[12]
    assert re.fullmatch(r"# Avg bus bandwidth    : \d+\.\d+", got[13])
    assert got[14:] == real[14:]


def test_perftest_report_layout_matches_real_gb10_and_raw_outputs() -> None:
    client = sample("ib_write_bw/ib_write_bw-gb10-client-q4-rdmacm.txt").splitlines()
    raw = sample("ib_write_bw/ib_write_bw-loopback-ib0-8M-server-and-client-superbench.txt")
    t = sim()
    ib = "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 4 -p 18515"
    t.start(Job("spark-2", ib, 60))
    lines = out(t, "spark-1", f"{ib} 192.168.100.12").splitlines()
    assert lines[:2] == client[:2] and lines[-1] == client[-1]
    assert lines[2].expandtabs(8).startswith(" Dual-port       : OFF")
    assert "\t\tDevice         : rocep1s0f1" in lines[2]
    header = next(line for line in lines if line.startswith(" #bytes"))
    assert header == next(line for line in client if line.startswith(" #bytes"))
    row_shape = re.compile(r"^ \d+ +\d+ +\d+\.\d\d +\d+\.\d\d *\t\t   \d+\.\d{6}$")
    raw_row = next(line for line in raw.splitlines() if line.startswith(" 8388608"))
    assert row_shape.match(raw_row)
    sim_row = lines[lines.index(header) + 1]
    assert row_shape.match(sim_row)
    starts = [m.start() for m in re.finditer(r"\S+", sim_row)]
    real_row = client[client.index(header) + 1]
    assert starts[:3] == [m.start() for m in re.finditer(r"\S+", real_row)][:3]
    labels = {
        line.split(":")[0].expandtabs(8).rstrip()
        for line in client + raw.splitlines()
        if ":" in line and line.startswith(" ") and "address" not in line
    }
    for line in lines:
        if ":" in line and line.startswith(" ") and "address" not in line and "GID:" not in line:
            assert line.split(":")[0].expandtabs(8).rstrip() in labels | {" GID index"}, line


def test_ethtool_module_labels_align_like_the_real_sff8636_dump() -> None:
    real = sample("ethtool-module/sff8636-qsfp28-cwdm4-finisar-reprogrammed-cx4.txt").splitlines()
    columns = {line.index(" : ") for line in real if " : " in line}
    assert columns == {41}
    qsfp56 = out(sim("mesh-3"), "spark-1", "ethtool -m enp1s0f1np1").splitlines()  # SFF-8636
    assert {line.index(" : ") for line in qsfp56} == columns
    cmis = sample(
        "ethtool-module/cmis-qsfpdd-400g-passive-dac-mellanox-mcp1660-mlxsw-2020-prepatch.txt"
    ).splitlines()
    qsfp112 = out(sim(), "spark-1", "ethtool -m enp1s0f1np1").splitlines()
    assert [ln[:41].rstrip() for ln in qsfp112] == [
        label
        for ln in cmis
        if " : " in ln and (label := ln.strip()[:41].rstrip()) in {x[:41].rstrip() for x in qsfp112}
    ]
    real_labels = {line[:41].rstrip() for line in real if " : " in line}
    copper = {f"Attenuation at {f}GHz" for f in ("2.5", "5.0", "7.0", "12.9")}
    assert {line[:41].rstrip() for line in qsfp56} <= real_labels | copper


def test_ethtool_settings_indent_like_the_real_output() -> None:
    real = sample("ethtool/cx4-ens16f1np1-40g-link-yes.txt").splitlines()
    indent = {line.split(":")[0].strip(): len(line) - len(line.lstrip()) for line in real}
    got = [ln.expandtabs(8) for ln in out(sim(), "spark-1", "ethtool enp1s0f1np1").splitlines()]
    assert got[0] == "Settings for enp1s0f1np1:"
    for line in got[1:]:
        key = line.split(":")[0].strip()
        if key in indent and ":" in line:
            assert len(line) - len(line.lstrip()) == indent[key], line
    continuation = [line for line in got if line.strip().endswith("/Full") and ":" not in line]
    assert continuation and all(line.startswith(" " * 32) for line in continuation)
    down = sim("direct-2", "{fault: link_down, node: spark-2}")
    text = out(down, "spark-1", "ethtool enp1s0f1np1")
    assert "\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n" in text
    assert text.endswith("\tLink detected: no\n")
