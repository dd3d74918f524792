"""Every shipped example validates, and every fault has its example."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.cluster.faults import FAULTS
from pytest_sparkfabric.transport.base import Job
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import EXAMPLES, example

HEALTHY = ["demo", "direct-2", "mesh-3", "ring-4", "switch-8"]


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.yaml")), ids=lambda p: p.name)
def test_every_example_loads(path: object) -> None:
    from pytest_sparkfabric.cluster import load_cluster

    cluster = load_cluster(str(path))
    assert cluster.nodes


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_examples_are_simulated_and_fault_free(name: str) -> None:
    cluster = example(name)
    assert cluster.spec.transport == "sim"
    assert cluster.spec.simulate is not None and not cluster.spec.simulate.faults
    t = SimTransport(cluster)
    for node in cluster.nodes:
        r = t.run(Job(node.name, "ibdev2netdev", 10))
        up = {line.split()[0] for line in r.stdout.splitlines() if line.endswith("(Up)")}
        assert up == {rail.rdma for rail in node.rails}


def test_the_real_template_uses_ssh_and_every_section() -> None:
    cluster = example("cluster.example")
    spec = cluster.spec
    assert spec.transport == "ssh" and all(n.ssh is not None for n in cluster.nodes)
    assert spec.switch is not None and spec.thresholds and spec.nccl.env
    assert spec.simulate is None


def test_one_fault_example_per_fault() -> None:
    names = {p.stem for p in (EXAMPLES / "faults").glob("*.yaml")}
    assert names == set(FAULTS)
    for name in names:
        spec = example(f"faults/{name}").spec
        assert spec.simulate is not None
        assert [f.fault for f in spec.simulate.faults] == [name]
        text = (EXAMPLES / "faults" / f"{name}.yaml").read_text()
        assert text.startswith(f"# Fault: {name}.") and "Should" in text.split("topology:")[0]
