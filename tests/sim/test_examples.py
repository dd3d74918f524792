"""The shipped examples: the real template uses ssh and every section; each fault example says
what it injects and what should fail (that it loads with its one fault, one example per fault:
tests/cluster/test_faults.py; the fault matrix runs every other example, test_plan the lab's)."""

from __future__ import annotations

from tests.sim.conftest import EXAMPLES, example


def test_the_real_template_uses_ssh_and_every_section() -> None:
    cluster = example("cluster.example")
    spec = cluster.spec
    assert spec.transport == "ssh" and all(n.ssh is not None for n in cluster.nodes)
    assert spec.switch is not None and spec.thresholds and spec.nccl.env
    assert spec.simulate is None


def test_every_fault_example_says_what_it_injects_and_what_should_fail() -> None:
    for path in (EXAMPLES / "faults").glob("*.yaml"):
        text = path.read_text()
        assert text.startswith(f"# Fault: {path.stem}.") and "Should" in text.split("topology:")[0]
