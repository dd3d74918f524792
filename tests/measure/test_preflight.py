"""The preflight phase against the simulated cluster. A prepared cluster lacks nothing:
tests/cli/test_prerequisites.py::test_demo_cluster_has_everything; one tool missing on one node
blocks only its checks there: the matrix's faults/tool_missing pins those items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pytest_sparkfabric.cluster import Cluster, load_cluster
from pytest_sparkfabric.cluster.load import parse_cluster
from pytest_sparkfabric.measure.engine import Fabric
from pytest_sparkfabric.measure.preflight import Preflight, lookups, preflight
from pytest_sparkfabric.transport import make_transport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NEEDS = (
    "ip",
    "ib_write_bw",
    "ib_write_lat",
    "iperf3",
    "lldpctl",
    "mlnx_qos|dcb",
    "nccl.launcher",
    "soak.gpu_load",
    "sudo ethtool -m",
)


def _cluster(name: str, **changes: dict[str, Any]) -> Cluster:
    path = EXAMPLES / name
    if not changes:
        return load_cluster(path)
    data = yaml.safe_load(path.read_text())
    for key, values in changes.items():
        data.setdefault(key, {}).update(values)
    return parse_cluster(yaml.safe_dump(data), source=str(path), path=path)


def _preflight(cluster: Cluster, needs: tuple[str, ...] = NEEDS) -> Preflight:
    transport = make_transport(cluster)
    try:
        return preflight(Fabric(cluster, transport), lambda: needs)
    finally:
        transport.close()


def _missing(checked: Preflight) -> dict[str, list[str]]:
    return {n: sorted({g.why.missing or "" for g in c.gaps}) for n, c in checked.nodes.items()}


def test_stock_nodes_block_a_check_on_every_node_that_lacks_its_tool_but_not_on_advisory() -> None:
    # What each stock node lacks, prerequisite by prerequisite: tests/cli/test_preflight.py.
    checked = _preflight(_cluster("direct-2.yaml", simulate={"profile": "stock"}))
    why = checked.blocking(["iperf3"], ["spark-1", "spark-2"])
    assert why is not None
    assert (why.reason, why.nodes, why.missing, why.fix) == (
        "spark-1: iperf3: command not found (iperf3 is not installed, or not on PATH); "
        "spark-2: iperf3: command not found (iperf3 is not installed, or not on PATH)",
        ("spark-1", "spark-2"),
        "iperf3",
        "sudo apt install iperf3",
    )
    # Advisory needs are reported but never block.
    sudo = [g for g in checked.nodes["spark-1"].gaps if g.need == "sudo ethtool -m"]
    assert [(g.advisory, g.why.reason) for g in sudo] == [
        (True, "spark-1: `sudo -n ethtool -m` was refused: sudo asks for a password")
    ]
    assert checked.blocking(["sudo ethtool -m", "lldpctl"], ["spark-1"]) is None


def test_looks_for_the_launcher_the_binary_and_libnccl_as_cluster_yaml_runs_them() -> None:
    cluster = _cluster(
        "direct-2.yaml",
        nccl={
            "binary": "~/nccl-tests/build/all_reduce_perf",
            "env": {"LD_LIBRARY_PATH": "/home/u/nccl/build/lib:relative"},
        },
        soak={"gpu_load": "~/gpu-burn/gpu_burn {duration_s}"},
    )
    look = lookups(cluster, "spark-1", ["nccl.launcher", "soak.gpu_load"])
    assert look.tools == ("mpirun", "~/nccl-tests/build/all_reduce_perf", "~/gpu-burn/gpu_burn")
    assert look.libs["libnccl.so.2"][0] == "/home/u/nccl/build/lib/libnccl.so.2*"
    assert look.sudo == () and look.sockets == ()


def test_sudo_refused_on_one_node_is_looked_for_on_every_cabled_port() -> None:
    cluster = _cluster("faults/sudo_refused.yaml")
    checked = _preflight(cluster, ("sudo ethtool -m",))
    assert _missing(checked) == {"spark-1": ["sudo ethtool -m"], "spark-2": []}
    assert checked.nodes["spark-2"].looked_for.sudo == (("ethtool", "-m", "enp1s0f1np1"),)
