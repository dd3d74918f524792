"""Versions on every node, in one table: ConnectX firmware and mlx5 driver (`ethtool -i`),
kernel (`uname -r`), GPU driver (`nvidia-smi`). A node that differs from the rest is where a
cluster that worked yesterday stops working after one box was updated."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, result_error
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.ethtool import build_ethtool_driver, parse_ethtool_driver
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.transport import RunResult

NAME: PhaseName = "versions"
Component = Literal["ConnectX firmware", "mlx5 driver", "kernel", "GPU driver"]
COMPONENTS: tuple[Component, ...] = ("ConnectX firmware", "mlx5 driver", "kernel", "GPU driver")


@dataclass(frozen=True, slots=True)
class Versions:
    """By node, by component: the version string, or why it could not be read."""

    nodes: Mapping[str, Mapping[Component, Measured[str]]]


def _text(r: RunResult, tool: str) -> Measured[str]:
    err = result_error(r, tool)
    if err:
        return Measured.failed(err)
    value = r.stdout.strip().splitlines()[0].strip() if r.stdout.strip() else ""
    return Measured.of(value) if value else Measured.failed(f"{r.node}: {tool} printed nothing")


def measure(fabric: Fabric) -> Versions:
    nodes = [n for n in fabric.cluster.nodes if n.rails]
    jobs: list[Job] = []
    for n in nodes:
        jobs += [
            Job(n.name, build_ethtool_driver(n.rails[0].netdev), QUICK_S),
            Job(n.name, shell.join(["uname", "-r"]), QUICK_S),
            Job(
                n.name,
                shell.join(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
                QUICK_S,
            ),
        ]
    results = fabric.run_all(jobs)
    out: dict[str, dict[Component, Measured[str]]] = {}
    for i, n in enumerate(nodes):
        eth, uname, smi = results[3 * i : 3 * i + 3]
        row: dict[Component, Measured[str]] = {}
        err = result_error(eth, "ethtool -i")
        if err:
            row["ConnectX firmware"] = row["mlx5 driver"] = Measured.failed(err)
        else:
            try:
                info = parse_ethtool_driver(eth.stdout)
                row["ConnectX firmware"] = _some(info.firmware_version, n.name, "firmware-version")
                row["mlx5 driver"] = _some(info.version, n.name, "version")
            except ParseError as exc:
                row["ConnectX firmware"] = row["mlx5 driver"] = Measured.failed(f"{n.name}: {exc}")
        row["kernel"] = _text(uname, "uname -r")
        row["GPU driver"] = _text(smi, "nvidia-smi")
        out[n.name] = row
    return Versions(out)


def _some(value: str | None, node: str, key: str) -> Measured[str]:
    return Measured.of(value) if value else Measured.failed(f"{node}: ethtool -i has no {key}")


def versions(fabric: Fabric) -> Versions:
    """Every node's versions (all nodes' reads in one round)."""
    return fabric.phase(NAME, measure)


def odd_ones(values: Mapping[str, str]) -> dict[str, str]:
    """Nodes whose value differs from the one most nodes share (with a tie, from the first
    node's); empty when all agree."""
    if len(set(values.values())) <= 1:
        return {}
    counts = Counter(values.values())
    top = max(counts.values())
    first = next(v for v in values.values() if counts[v] == top)
    return {n: v for n, v in values.items() if v != first}
