"""Every shipped example validates, and every fault has its example."""

from __future__ import annotations

from pytest_sparkfabric.cluster.faults import FAULTS
from tests.sim.conftest import EXAMPLES, example


# The fault matrix (tests/suite/test_matrix.py) loads and runs every other example, test_plan
# every lab example.
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
