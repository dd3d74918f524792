"""Each fault the kernel can express, made real in a lab: the shipped suite's kernel-level tests
(labkit.KERNEL; the simulated side of a fault is the simulator's to test), reading the nodes'
kernels over ssh, fail exactly where the fault is (pinned as `lab/NAME` in
tests/data/matrix.json), and nothing is left."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sparkfabric_lab.status import status
from tests.lab import labkit
from tests.suite.runner import SuiteRun, pin

pytestmark = labkit.lab_marks()


@dataclass(frozen=True)
class Case:
    example: str
    fault: dict[str, Any]
    # a node whose jumbo pings may fail as well, depending on a race the kernel runs (ARP flux)
    racy: str | None = None

    def may(self, item: str) -> bool:
        return bool(self.racy) and item.startswith("test_jumbo_ping[") and f"{self.racy}:" in item


S1, S2, S3 = "spark-1", "spark-2", "spark-3"
CASES: dict[str, Case] = {
    # with test_roce_mtu: the active MTU is 1024 at 1500, not 4096
    "mtu-node-rail": Case("direct-2", dict(fault="mtu", node=S1, rail=0, value=1500)),
    "mtu-switch-port": Case("switch-4", dict(fault="mtu", switch_port="qsfp56-dd-1-5", value=1500)),
    # with test_cabling: a dark cable is a cable not found (link_down)
    "link-down-direct": Case("direct-2", dict(fault="link_down", node=S1)),
    "link-down-ring-port": Case("ring-4", dict(fault="link_down", node=S1, port=0)),
    "link-down-switch": Case("switch-4", dict(fault="link_down", node=S3)),
    "duplicate-ip": Case("direct-2", dict(fault="duplicate_ip", node=S2, rail=0)),
    "ipv6-enabled": Case("direct-2", dict(fault="ipv6_enabled", node=S1, rail=1)),
    "rp-filter-strict": Case("direct-2", dict(fault="rp_filter_strict", node=S2, rail=0)),
    # Real ARP flux: spark-1 answers ARP for one rail on both, a peer may cache the wrong MAC
    # and its replies land on the other netdev, where the bound ping never sees them.
    "arp-flux": Case("switch-4", dict(fault="arp_flux", node=S1), racy=S1),
    # every test of the node (ssh is refused), and the version table, which needs them all
    "node-unreachable": Case("direct-2", dict(fault="node_unreachable", node=S2)),
    "nccl-socket": Case("direct-2", dict(fault="nccl_socket", node=S2)),
    "pcie-width": Case("direct-2", dict(fault="pcie_width", node=S1, rail=1)),
    "command-hangs": Case("direct-2", dict(fault="command_hangs", command="ping", node=S1)),
}  # fmt: skip


Outcome = tuple[labkit.Lab, SuiteRun, dict[str, list[str]]]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    def go(name: str, lab: labkit.Lab) -> Outcome:
        out = tmp_path_factory.mktemp(f"run-{name}")
        return lab, labkit.run_suite(lab.cluster_yaml, out, labkit.KERNEL), labkit.strays_after(lab)

    paths = {
        name: labkit.cluster_file(tmp_path_factory.mktemp(name), case.example, faults=[case.fault])
        for name, case in CASES.items()
    }
    with labkit.labs_running(paths, go, 6) as outcomes:
        yield outcomes


@pytest.mark.parametrize("name", list(CASES))
def test_exactly_the_tests_of_the_fault_fail_and_nothing_is_left(
    name: str, outcomes: dict[str, Outcome]
) -> None:
    case, (lab, run, strays) = CASES[name], outcomes[name]
    if name == "node-unreachable":
        assert lab.ssh_error(S2) == f"{S2}: ssh: connection refused"
        # `lab status` says the node has no sshd, and exits 1 as docs/lab.md says.
        st = status(lab.dir)
        assert st.rc == 1, st.lines
        assert f"{S2}: no sshd (fault node_unreachable): ssh is refused" in st.problems
    failed = sorted(k for k in run.failed if not case.may(k))
    assert failed, "a fault case must fail something"
    assert failed == pin(f"lab/{name}", failed)
    # The command_hangs case included: the hung tool ends with its deadline.
    assert strays == {}
