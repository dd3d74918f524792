"""The simulated mlnx_qos and counters match the real tools (tests/data/mlnx_qos samples;
mlx5 counter names and their presence rules, research/FACTS.md §7-8)."""

from __future__ import annotations

from pytest_sparkfabric.probes.ethtool import parse_ethtool_stats
from pytest_sparkfabric.probes.hw_counters import build_hw_counters, parse_hw_counters
from pytest_sparkfabric.probes.mlnx_qos import parse_mlnx_qos
from sparkfabric_sim.tools.qos import render
from tests.probes.golden import sample
from tests.sim.conftest import out, sim

SAMPLE = "mlnx_qos/cx-ens6-trust-pcp-pfc-all-off-receive-buffer-trailing-comma.txt"


def test_pfc_off_is_the_real_sample_byte_for_byte_but_its_tabs() -> None:
    # The sample's source turned mlnx_qos's TABs into 8 spaces; everything else is as printed.
    assert render(frozenset()).replace("\t", " " * 8) == sample(SAMPLE)
    q = parse_mlnx_qos(render(frozenset({3})))
    assert (q.pfc_priorities, q.trust, q.dcbx_mode) == ((3,), "pcp", "OS controlled")


def test_host_pfc_shows_in_mlnx_qos_and_its_per_priority_pause_counters() -> None:
    t = sim("faults/host_pfc")  # PFC on priority 3 on spark-2 only
    for node, priorities in (("spark-2", (3,)), ("spark-1", ())):
        assert parse_mlnx_qos(out(t, node, "mlnx_qos -i enp1s0f1np1")).pfc_priorities == priorities
    on = parse_ethtool_stats(out(t, "spark-2", "ethtool -S enp1s0f1np1"))
    off = parse_ethtool_stats(out(t, "spark-1", "ethtool -S enp1s0f1np1"))
    assert "rx_prio3_pause" in on and "tx_prio3_pause" in on
    assert not any(k.endswith("_pause") and "prio" in k for k in off)


def test_the_rdma_port_exposes_the_lossy_roce_hw_counters() -> None:
    port = parse_hw_counters(out(sim(), "spark-1", str(build_hw_counters(["rocep1s0f1"])))).port(
        "rocep1s0f1"
    )
    assert port is not None
    for name in ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "np_cnp_sent"):
        assert port.get(name) == 0
