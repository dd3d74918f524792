"""The simulated mlnx_qos and counters match the real tools (tests/data/mlnx_qos samples;
mlx5 counter names and their presence rules, research/FACTS.md §7-8)."""

from __future__ import annotations

from pathlib import Path

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.probes.ethtool import parse_ethtool_stats
from pytest_sparkfabric.probes.hw_counters import build_hw_counters, parse_hw_counters
from pytest_sparkfabric.probes.mlnx_qos import parse_mlnx_qos
from pytest_sparkfabric.transport import Job
from sparkfabric_sim.tools.qos import render
from sparkfabric_sim.transport import SimTransport
from tests.probes.golden import sample

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "mlnx_qos/cx-ens6-trust-pcp-pfc-all-off-receive-buffer-trailing-comma.txt"


def test_pfc_off_is_the_real_sample_byte_for_byte_but_its_tabs() -> None:
    # The sample's source turned mlnx_qos's TABs into 8 spaces; everything else is as printed.
    assert render(frozenset()).replace("\t", " " * 8) == sample(SAMPLE)


def test_pfc_on_priority_3_reads_back() -> None:
    q = parse_mlnx_qos(render(frozenset({3})))
    assert (q.pfc_priorities, q.trust, q.dcbx_mode) == ((3,), "pcp", "OS controlled")


def _run(example: str, node: str, command: str) -> str:
    t = SimTransport(load_cluster(ROOT / "examples" / example))
    r = t.run(Job(node, command, 10))
    assert r.rc == 0, r.stderr
    return r.stdout


def test_mlnx_qos_on_a_node_with_host_pfc() -> None:
    out = _run("faults/host_pfc.yaml", "spark-2", "mlnx_qos -i enp1s0f1np1")
    assert parse_mlnx_qos(out).pfc_priorities == (3,)
    other = _run("faults/host_pfc.yaml", "spark-1", "mlnx_qos -i enp1s0f1np1")
    assert parse_mlnx_qos(other).pfc_priorities == ()


def test_per_priority_pause_counters_exist_only_where_pfc_is_on() -> None:
    on = parse_ethtool_stats(_run("faults/host_pfc.yaml", "spark-2", "ethtool -S enp1s0f1np1"))
    off = parse_ethtool_stats(_run("faults/host_pfc.yaml", "spark-1", "ethtool -S enp1s0f1np1"))
    assert "rx_prio3_pause" in on and "tx_prio3_pause" in on
    assert not any(k.endswith("_pause") and "prio" in k for k in off)


def test_the_rdma_port_exposes_the_lossy_roce_hw_counters() -> None:
    out = _run("direct-2.yaml", "spark-1", str(build_hw_counters(["rocep1s0f1"])))
    port = parse_hw_counters(out).port("rocep1s0f1")
    assert port is not None
    for name in ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "np_cnp_sent"):
        assert port.get(name) == 0
