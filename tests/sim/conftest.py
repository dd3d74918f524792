from __future__ import annotations

from pathlib import Path

from pytest_sparkfabric.cluster import Cluster, load_cluster, parse_cluster
from pytest_sparkfabric.transport.base import Job, RunResult
from sparkfabric_sim.transport import SimTransport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> Cluster:
    return load_cluster(EXAMPLES / f"{name}.yaml")


def with_faults(name: str, *faults: str, seed: int = 7) -> Cluster:
    """An example with `simulate.faults` replaced (each fault a YAML flow mapping)."""
    text = (EXAMPLES / f"{name}.yaml").read_text().split("simulate:")[0]
    text += f"simulate:\n  seed: {seed}\n  faults:\n" if faults else f"simulate:\n  seed: {seed}\n"
    text += "".join(f"    - {f}\n" for f in faults)
    return parse_cluster(text, source=f"{name}+faults")


class Sim:
    """A SimTransport with short helpers for tests."""

    def __init__(self, cluster: Cluster) -> None:
        self.t = SimTransport(cluster)

    def run(self, node: str, command: str, timeout: float = 120.0) -> RunResult:
        return self.t.run(Job(node, command, timeout))

    def ok(self, node: str, command: str, timeout: float = 120.0) -> str:
        r = self.run(node, command, timeout)
        assert r.rc == 0, (command, r.rc, r.stdout, r.stderr)
        return r.stdout
