"""Each fault the kernel can express, made real in a lab: the shipped suite's kernel-level tests
(labkit.KERNEL; the simulated side of a fault is the simulator's to test) fail exactly where the
fault is (pinned as `lab/NAME` in tests/data/matrix.json), the kernel shows it, nothing is left."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from sparkfabric_lab import host
from sparkfabric_lab.status import status
from tests.lab import labkit
from tests.suite.runner import SuiteRun, pin

pytestmark = labkit.lab_marks()
Check = Callable[..., None]
"""A look at the lab: a function given all but its `lab` keyword (functools.partial)."""


def _ip(lab: labkit.Lab, node: str, *args: str) -> list[dict[str, Any]]:
    r = lab.in_node(node, ["ip", "-j", *args])
    assert r.returncode == 0, r.stderr
    data: list[dict[str, Any]] = json.loads(r.stdout)
    return data


def reads(node: str, argv: list[str], *holds: str, lab: labkit.Lab) -> None:
    """The command succeeds in the node's namespaces, its output holding each of `holds`."""
    r = lab.in_node(node, argv)
    assert r.returncode == 0 and all(h in r.stdout for h in holds), (argv, r)


def is_line(node: str, path: str, line: str) -> Check:
    """`path` holds `line` as a whole line (sysfs, sysctls, /etc/nccl.conf)."""
    return partial(reads, node, ["grep", "-x", "--", line, path])


def no_carrier(*where: tuple[str, str], lab: labkit.Lab) -> None:
    for node, dev in where:
        flags = _ip(lab, node, "link", "show", "dev", dev)[0]["flags"]
        assert "UP" in flags and "NO-CARRIER" in flags, (node, dev, flags)
        port = lab.in_node(node, ["sh", "-c", "cat /sys/class/infiniband/*/ports/1/state"])
        assert "1: DOWN" in port.stdout


def switch_leg_mtu(leg: str, mtu: int, *, lab: labkit.Lab) -> None:
    r = host.run(["ip", "-n", lab.state.namespaces[-1], "-j", "link", "show", "dev", leg])
    assert json.loads(r.stdout)[0]["mtu"] == mtu


def carries(node: str, dev: str, address: str, *, lab: labkit.Lab) -> None:
    infos = _ip(lab, node, "addr", "show", "dev", dev)[0]["addr_info"]
    assert [f"{a['local']}/{a['prefixlen']}" for a in infos] == [address]


def ssh_refused(node: str, *, lab: labkit.Lab) -> None:
    assert lab.ssh_error(node) == f"{node}: ssh: connection refused"
    # `lab status` says the node has no sshd, and exits 1 as docs/lab.md says.
    st = status(lab.dir)
    assert st.rc == 1, st.lines
    assert f"{node}: no sshd (fault node_unreachable): ssh is refused" in st.problems


def hangs(node: str, tool: str, *, lab: labkit.Lab) -> None:
    path = f"PATH={lab.dir}/bin/{node}:$PATH"
    assert lab.in_node(node, ["timeout", "1", "sh", "-c", f"{path}; {tool}"]).returncode == 124


def unplugged(*, lab: labkit.Lab) -> None:
    """The far end of a dark cable sits in a namespace of its own (and goes with the lab)."""
    assert "unplugged" in lab.state.namespaces[-1]


@dataclass(frozen=True)
class Case:
    example: str
    fault: dict[str, Any]
    check: Check
    also: Check | None = None
    # a node whose jumbo pings may fail as well, depending on a race the kernel runs (ARP flux)
    racy: str | None = None

    def may(self, item: str) -> bool:
        return bool(self.racy) and item.startswith("test_jumbo_ping[") and f"{self.racy}:" in item


S1, S2, S3 = "spark-1", "spark-2", "spark-3"
IP_J = ["ip", "-j", "link", "show", "dev"]
CASES: dict[str, Case] = {
    # with test_roce_mtu: the active MTU is 1024 at 1500, not 4096
    "mtu-node-rail": Case("direct-2", dict(fault="mtu", node=S1, rail=0, value=1500),
                          partial(reads, S1, [*IP_J, "enp1s0f1np1"], '"mtu":1500,')),
    "mtu-switch-port": Case("switch-4",
                            dict(fault="mtu", switch_port="qsfp56-dd-1-5", value=1500),
                            partial(switch_leg_mtu, "p2r0", 1500)),
    # with test_cabling: a dark cable is a cable not found (link_down)
    "link-down-direct": Case("direct-2", dict(fault="link_down", node=S1),
                             partial(no_carrier, (S1, "enp1s0f1np1"), (S2, "enP2p1s0f1np1")),
                             unplugged),
    "link-down-ring-port": Case("ring-4", dict(fault="link_down", node=S1, port=0),
                                partial(no_carrier, (S1, "enp1s0f0np0"), (S2, "enP2p1s0f1np1"))),
    "link-down-switch": Case("switch-4", dict(fault="link_down", node=S3),
                             partial(no_carrier, (S3, "enp1s0f1np1"))),
    "duplicate-ip": Case("direct-2", dict(fault="duplicate_ip", node=S2, rail=0),
                         partial(carries, S2, "enp1s0f1np1", "198.19.0.11/24")),
    "ipv6-enabled": Case("direct-2", dict(fault="ipv6_enabled", node=S1, rail=1),
                         partial(reads, S1, ["ip", "-j", "addr", "show", "dev", "enP2p1s0f1np1"],
                                 '"family":"inet6"')),
    "rp-filter-strict": Case("direct-2", dict(fault="rp_filter_strict", node=S2, rail=0),
                             is_line(S2, "/proc/sys/net/ipv4/conf/enp1s0f1np1/rp_filter", "1")),
    # Real ARP flux: spark-1 answers ARP for one rail on both, a peer may cache the wrong MAC
    # and its replies land on the other netdev, where the bound ping never sees them.
    "arp-flux": Case("switch-4", dict(fault="arp_flux", node=S1),
                     is_line(S1, "/proc/sys/net/ipv4/conf/all/arp_ignore", "0"), racy=S1),
    # every test of the node (ssh is refused), and the version table, which needs them all
    "node-unreachable": Case("direct-2", dict(fault="node_unreachable", node=S2),
                             partial(ssh_refused, S2)),
    "nccl-socket": Case("direct-2", dict(fault="nccl_socket", node=S2),
                        is_line(S2, "/etc/nccl.conf", "NCCL_NET=Socket")),
    "pcie-width": Case("direct-2", dict(fault="pcie_width", node=S1, rail=1),
                       is_line(S1, "/sys/bus/pci/devices/0002:01:00.1/current_link_width", "2")),
    "command-hangs": Case("direct-2", dict(fault="command_hangs", command="ping", node=S1),
                          partial(hangs, S1, "ping -c 1 127.0.0.1")),
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
def test_the_kernel_shows_the_fault_and_exactly_its_tests_fail(
    name: str, outcomes: dict[str, Outcome]
) -> None:
    case, (lab, run, strays) = CASES[name], outcomes[name]
    case.check(lab=lab)
    if case.also:
        case.also(lab=lab)
    failed = sorted(k for k in run.failed if not case.may(k))
    assert failed, "a fault case must fail something"
    assert failed == pin(f"lab/{name}", failed)
    # The command_hangs case included: the hung tool ends with its deadline.
    assert strays == {}
