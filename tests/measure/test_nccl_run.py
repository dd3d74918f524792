"""The NCCL launch line and how NCCL_DEBUG=INFO lines map to nodes (pure). A rank that falls back
to Socket fails on its own node, a run without its average fails (not a zero): the matrix's
faults/nccl_socket and nccl_socket_ifname."""

from __future__ import annotations

from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence
from pytest_sparkfabric.measure import nccl_run
from pytest_sparkfabric.probes.nccl import parse_nccl_tests

DIRECT = """
topology: direct
transport: sim
nodes:
  - name: spark-1
    ports: {1: [192.168.100.11/24, 192.168.101.11/24]}
  - name: spark-2
    ports: {1: [192.168.100.12/24, 192.168.101.12/24]}
nccl:
  env: {NCCL_IB_GID_INDEX: "3", NCCL_DEBUG: WARN}
"""
CLUSTER = parse_cluster(DIRECT)
BOTH = "rocep1s0f1,roceP2p1s0f1"


def log(devices: dict[str, str]) -> str:
    """A two-rank log, each host over IB with its devices."""
    lines = [
        "# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809",
        "# Using devices",
        "#  Rank  0 Group  0 Pid  41007 on    spark-1 device  0 [000f:01:00] NVIDIA GB10",
        "#  Rank  1 Group  0 Pid  51014 on    spark-2 device  0 [000f:01:00] NVIDIA GB10",
    ]
    for host, pid in (("spark-1", 41007), ("spark-2", 51014)):
        at = f"{host}:{pid}:{pid + 7} [0] NCCL INFO"
        devs = " ".join(f"[{i}]{d}:1/RoCE" for i, d in enumerate(devices[host].split(",")))
        lines += [f"{at} NET/IB : Using {devs} ; OOB x", f"{at} Using network IB"]
    lines += [
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong",
        " 17179869184    4294967296     float     sum      -1   749000   22.94   22.94       0"
        "   748000   22.97   22.98       0",
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 22.9",
    ]
    return "\n".join(lines) + "\n"


def test_command_uses_the_template_adds_nccl_debug_info_and_the_playbook_paths() -> None:
    cmd = nccl_run.command(CLUSTER)
    assert cmd.startswith("mpirun --allow-run-as-root -np 2 -H 192.168.100.11:1,192.168.100.12:1 ")
    assert "-x NCCL_DEBUG=INFO" in cmd and "NCCL_DEBUG=WARN" not in cmd
    assert "-x NCCL_IB_GID_INDEX=3" in cmd
    assert "NCCL_IB_HCA" not in cmd  # the nodes' own NCCL config decides, as in production
    assert cmd.endswith("all_reduce_perf -b 16G -e 16G -f 2 -g 1")
    assert nccl_run.launch_node(CLUSTER) == "spark-1"
    assert nccl_run.expected_devices(CLUSTER, "spark-2") == ("rocep1s0f1", "roceP2p1s0f1")
    # The default launcher's values, not the control shell's exports (a non-interactive ssh
    # shell has neither), and MPI's TCP pinned to the management netdev.
    lib = "$HOME/nccl/build/lib:/usr/local/cuda/lib64:/usr/lib/aarch64-linux-gnu/openmpi/lib"
    assert f" -x LD_LIBRARY_PATH={lib} " in cmd and " -x PATH " not in cmd
    assert " ~/nccl-tests/build/all_reduce_perf -b 16G " in cmd
    assert " --mca btl_tcp_if_include enP7s7 --mca oob_tcp_if_include enP7s7 " in cmd


def test_ranks_map_to_nodes_by_host_and_pid() -> None:
    parsed = parse_nccl_tests(log({"spark-1": BOTH, "spark-2": "rocep1s0f1"}))
    ranks = nccl_run.rank_nets(CLUSTER, parsed)
    assert ranks["spark-1"].devices == ("rocep1s0f1", "roceP2p1s0f1")
    assert ranks["spark-2"].devices == ("rocep1s0f1",)
    assert ranks["spark-2"].rank == 1 and ranks["spark-2"].networks == frozenset({"IB"})
    run = nccl_run.NcclRun("cmd", "spark-1", None, parsed, None, ranks)
    assert run.problems() == []
    assert run.busbw_by_size() == {17179869184: 22.98}
    found = diagnose(Evidence(nccl=nccl_run.evidence(CLUSTER, run)))
    assert [f.rule.id for f in found] == ["nccl_single_hca"]
    assert "spark-2 (rank 1) uses rocep1s0f1" in found[0].evidence
