"""The preflight phase against the simulated cluster. A prepared cluster lacks nothing:
tests/cli/test_prerequisites.py::test_demo_cluster_has_everything; one tool missing on one node
blocks only its checks there: the matrix's faults/tool_missing pins those items; a stock node's
blocking reasons and fix, and the advisory EEPROM read that only warns: tests/suite/test_stock.py
(what `sparkfabric preflight` prints of it: tests/cli/test_prerequisites.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_sparkfabric.cluster import load_cluster
from pytest_sparkfabric.measure.preflight import lookups, preflight
from tests.measure.onsim import sim_fabric
from tests.suite.runner import EXAMPLES, write_cluster


def test_looks_for_the_launcher_the_binary_and_libnccl_as_cluster_yaml_runs_them(
    tmp_path: Path,
) -> None:
    nccl = {
        "binary": "~/nccl-tests/build/all_reduce_perf",
        "env": {"LD_LIBRARY_PATH": "/home/u/nccl/build/lib:relative"},
    }
    soak = {"gpu_load": "~/gpu-burn/gpu_burn {duration_s}"}
    cluster = load_cluster(
        write_cluster(tmp_path, "direct-2.yaml", changes=dict(nccl=nccl, soak=soak))
    )
    look = lookups(cluster, "spark-1", ["nccl.launcher", "soak.gpu_load"])
    assert look.tools == ("mpirun", "~/nccl-tests/build/all_reduce_perf", "~/gpu-burn/gpu_burn")
    assert look.libs["libnccl.so.2"][0] == "/home/u/nccl/build/lib/libnccl.so.2*"
    assert look.sudo == () and look.sockets == ()


def test_sudo_refused_on_one_node_is_looked_for_on_every_cabled_port() -> None:
    cluster = load_cluster(EXAMPLES / "faults/sudo_refused.yaml")
    checked = preflight(sim_fabric(cluster), lambda: ("sudo ethtool -m",))
    missing = {n: sorted({g.why.missing or "" for g in c.gaps}) for n, c in checked.nodes.items()}
    assert missing == {"spark-1": ["sudo ethtool -m"], "spark-2": []}
    assert checked.nodes["spark-2"].looked_for.sudo == (("ethtool", "-m", "enp1s0f1np1"),)
