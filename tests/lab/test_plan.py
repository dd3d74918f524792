"""The lab's plan, files and fake sysfs, without root: what `lab up` would build and write."""

from __future__ import annotations

import argparse
import os
import subprocess
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_sparkfabric.cluster import Cluster, hardware, load_cluster, parse_cluster
from pytest_sparkfabric.cluster.plan import plan as topo_plan
from pytest_sparkfabric.probes import sysfs
from sparkfabric_lab import LabError, boot, files, host, systree
from sparkfabric_lab import cli as cli_lab
from sparkfabric_lab.assemble import build_plan
from sparkfabric_lab.plan import SWITCH_BRIDGE, Hang, LabPlan
from tests.lab.labkit import EXAMPLES, cluster_file

MGMT = IPv4Network("198.18.0.0/24")
TOPOLOGIES = {"direct-2": (2, 2), "mesh-3": (3, 6), "ring-4": (4, 8), "switch-4": (4, 8)}
"""Every lab example: its nodes and fabric cables."""


def plan_of(path: Path, prefix: str = "sf-") -> tuple[Cluster, LabPlan]:
    cluster = load_cluster(path)
    return cluster, build_plan(cluster, prefix=prefix, mgmt=MGMT)


def sim_cluster(tmp_path: Path, path: Path) -> Path:
    """The simulator's cluster.yaml a lab of `path` writes (what its resident simulates)."""
    sim = tmp_path / "sim-cluster.yaml"
    raw = yaml.safe_load(path.read_text())
    sim.write_text(files.dump_yaml(files.sim_cluster(raw, plan_of(path)[1]), "sim", str(path)))
    return sim


def with_faults(tmp_path: Path, example: str, *faults: dict[str, Any]) -> LabPlan:
    return plan_of(cluster_file(tmp_path, example, faults=faults))[1]


@pytest.mark.parametrize("example", sorted(TOPOLOGIES))
def test_examples_build_with_real_spark_names(example: str) -> None:
    assert {p.stem for p in EXAMPLES.glob("*.yaml")} == set(TOPOLOGIES)
    cluster, plan = plan_of(EXAMPLES / f"{example}.yaml")
    nodes, fabric_wires = TOPOLOGIES[example]
    spark_names = {hardware.rail_names(p, r).netdev for p in (0, 1) for r in (0, 1)}
    switch = 1 if cluster.topology == "switch" else 0
    assert len(plan.namespaces) == nodes + switch
    assert len(plan.wires) == fabric_wires + nodes + switch
    node_ns = {n.ns for n in plan.nodes}
    for end in (end for w in plan.wires for end in (w.a, w.b)):
        assert len(end.name) <= 15
        if end.ns in node_ns and end.name != hardware.MGMT_NETDEV:
            assert end.name in spark_names and end.mtu == cluster.mtu
    assert all(len(name) <= 15 for name in plan.host_links)
    assert all(rail.address.ip in IPv4Network("198.18.0.0/15") for rail in cluster.rails)
    assert [str(n.mgmt) for n in plan.nodes] == [f"198.18.0.{11 + i}/24" for i in range(nodes)]


def test_p2p_cables_join_the_planned_rails() -> None:
    cluster, plan = plan_of(EXAMPLES / "ring-4.yaml")
    ends = {(w.a.ns, w.a.name, w.b.ns, w.b.name) for w in plan.wires}
    for link in topo_plan(cluster).links:
        assert (f"sf-{link.a.node}", link.a.netdev, f"sf-{link.b.node}", link.b.netdev) in ends


def test_switch_is_one_bridge_with_a_leg_per_rail_as_its_example_says() -> None:
    cluster, plan = plan_of(EXAMPLES / "switch-4.yaml")
    assert [b.name for b in plan.bridges] == [SWITCH_BRIDGE]
    legs = [w.b for w in plan.wires if w.b.ns == "sf-switch" and w.b.master]
    assert len(legs) == len(cluster.rails)
    for rail in cluster.rails:
        w = next(w for w in plan.wires if w.a.ns == f"sf-{rail.node}" and w.a.name == rail.netdev)
        assert w.b.master == SWITCH_BRIDGE
    # both rails share the switch's L2 network: the ARP sysctls are set as on a real node
    sysctls = dict(plan.node("spark-1").sysctls)
    assert sysctls["net/ipv4/conf/all/arp_ignore"] == "1"
    assert sysctls["net/ipv4/conf/all/arp_announce"] == "2"
    text = (EXAMPLES / "switch-4.yaml").read_text().splitlines()
    comment = "".join(ln for ln in text if ln.startswith("#"))
    assert f"one Linux bridge ({SWITCH_BRIDGE})" in comment and "per rail" not in comment
    assert "pytest --cluster=/run/sparkfabric-lab/cluster.yaml" in comment
    assert plan.switch_mgmt is not None and f": {plan.switch_mgmt.ip})" in comment


@pytest.mark.parametrize(
    ("prefix", "mgmt", "fabric", "needle"),
    [
        ("Bad_prefix", "198.18.0.0/24", "198.19.", "prefix"),
        ("toolong1-", "198.18.0.0/24", "198.19.", "prefix"),
        ("sf-", "10.0.0.0/24", "198.19.", "outside 198.18.0.0/15"),
        ("sf-", "198.18.0.0/29", "198.19.", "too small"),
        ("sf-", "198.19.0.0/24", "198.19.", "overlaps the management subnet"),
        ("sf-", "198.18.0.0/24", "192.168.", r"spark-1:rail0 192\.168\.0\.11/24 is outside"),
    ],
)
def test_lab_settings_and_fabric_are_checked(
    prefix: str, mgmt: str, fabric: str, needle: str
) -> None:
    cluster = parse_cluster((EXAMPLES / "direct-2.yaml").read_text().replace("198.19.", fabric))
    with pytest.raises(LabError, match=needle):
        build_plan(cluster, prefix=prefix, mgmt=IPv4Network(mgmt))


# -- faults (what each makes of the kernel, and what fails then: test_lab_faults.CASES) ------------


def test_faults_in_the_plan(tmp_path: Path) -> None:
    mtu = {"fault": "mtu", "switch_port": "qsfp56-dd-1-5", "value": 1500}
    plan = with_faults(tmp_path, "switch-4", mtu)
    legs = {w.b.name: w.b.mtu for w in plan.wires if w.b.ns == "sf-switch" and w.b.master}
    assert legs == {f"p{n}r{r}": 1500 if n == 2 else 9216 for n in (1, 2, 3, 4) for r in (0, 1)}
    # rp_filter_strict on a node without a rail sets `all`
    plan = with_faults(tmp_path, "direct-2", {"fault": "rp_filter_strict", "node": "spark-1"})
    assert dict(plan.node("spark-1").sysctls)["net/ipv4/conf/all/rp_filter"] == "1"
    # only a hung tool stays out of the simulator
    plan = with_faults(
        tmp_path, "direct-2",
        {"fault": "node_unreachable", "node": "spark-2"},
        {"fault": "command_hangs", "command": "ethtool -S", "node": "spark-1"},
        {"fault": "nccl_socket", "node": "spark-1"},
        {"fault": "nic_throttled", "node": "spark-1"},
        {"fault": "mtu", "node": "spark-1", "rail": 0, "value": 1500},
    )  # fmt: skip
    assert plan.sim_faults == (0, 2, 3, 4)  # all but command_hangs, a wrapper of its own
    one, two = plan.node("spark-1"), plan.node("spark-2")
    assert not two.sshd and one.sshd
    assert one.hangs == (Hang("ethtool", ("-S",)),) and two.hangs == ()
    assert "NCCL_NET=Socket" in one.nccl_conf and "NCCL_NET" not in two.nccl_conf
    # The nodes share the host's files: a tool the lab does not simulate cannot be taken away.
    hide = {"fault": "tool_missing", "command": "sh", "node": "spark-2"}
    with pytest.raises(LabError, match=r"cannot take `sh` away: every node shares this host's"):
        with_faults(tmp_path, "direct-2", hide)


# -- fake sysfs ------------------------------------------------------------------------------------


def test_fake_sysfs_reads_through_the_plugins_parsers(tmp_path: Path) -> None:
    plan = with_faults(tmp_path, "direct-2", {"fault": "pcie_width", "node": "spark-1", "rail": 1})
    node = plan.node("spark-1")
    macs = {r.netdev: f"02:00:00:00:00:0{i}" for i, r in enumerate(node.rails)}
    files_ = systree.render(node, macs)
    values: dict[str, str | None] = dict(files_)
    for rail in node.rails:
        table = sysfs.gid_table(values, rail.rdma)
        gid = sysfs.find_rocev2_gid(table, rail.netdev, rail.address.ip)
        assert gid is not None and gid.index == (3 if rail.index == 0 else 5)
        assert table[0].gid.startswith("fe80:0000:0000:0000:0000:00ff:fe00:000")
        state = sysfs.port_state(values[sysfs.ib_port_paths(rail.rdma)["state"]])
        assert (state.code, state.name) == (4, "ACTIVE")
        pcie = sysfs.pcie_paths(rail.pci)
        assert sysfs.link_speed_gt_s(values[pcie["current_link_speed"]]) == 32.0
        width = sysfs.int_value(values[pcie["current_link_width"]])
        assert width == (2 if rail.index == 1 else 4)
    assert systree.ipv4_gid(IPv4Interface("198.19.0.11/24")).endswith("ffff:c613:000b")
    assert all(systree.cover_for(p) in systree.COVERS for p in files_)


def test_boot_merge_links_real_entries_and_lays_fakes_over(tmp_path: Path) -> None:
    real = tmp_path / "real" / "class"
    (real / "net").mkdir(parents=True)
    (tmp_path / "devices" / "eth0").mkdir(parents=True)
    (tmp_path / "devices" / "eth0" / "mtu").write_text("1500\n")
    os.symlink(tmp_path / "devices" / "eth0", real / "net" / "eth0")
    (real / "tty").mkdir()
    os.symlink(real / "net", real / "tty" / "alias")  # resolves inside the covered dir
    tree = boot.tree_of({f"{real}/infiniband/x/ports/1/state": "4: ACTIVE",
                         f"{real}/net/eth0/device/hwmon/hwmon0/temp1_input": "45000"},
                        str(real))  # fmt: skip
    out = tmp_path / "merged"
    boot.merge(str(real), tree, str(out))
    assert (out / "infiniband/x/ports/1/state").read_text() == "4: ACTIVE\n"
    assert (out / "net/eth0/mtu").read_text() == "1500\n"  # through a link to the real entry
    assert (out / "net/eth0/device/hwmon/hwmon0/temp1_input").read_text() == "45000\n"
    assert os.readlink(out / "tty" / "alias") == str(real / "net")


# -- files -----------------------------------------------------------------------------------------


def test_sshd_and_ssh_config(tmp_path: Path) -> None:
    _, plan = plan_of(EXAMPLES / "direct-2.yaml")
    text = files.sshd_config(tmp_path, plan.node("spark-1"))
    for line in (
        "ListenAddress 198.18.0.11:22",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "StrictModes no",
        f"AuthorizedKeysFile {tmp_path}/ssh/authorized_keys",
        f"PidFile {tmp_path}/nodes/spark-1/sshd.pid",
        f"SetEnv PATH={tmp_path}/bin/spark-1:/usr/local/sbin:",
    ):
        assert line in text
    cfg = files.ssh_config(tmp_path, plan)
    assert "Host spark-2\n  HostName 198.18.0.12\n  User root\n" in cfg
    assert "StrictHostKeyChecking no" in cfg and "UserKnownHostsFile /dev/null" in cfg


def test_derived_and_simulator_clusters_validate(tmp_path: Path) -> None:
    path = cluster_file(
        tmp_path, "switch-4",
        faults=[{"fault": "mtu", "node": "spark-1", "value": 1500},
                {"fault": "node_unreachable", "node": "spark-2"}],
    )  # fmt: skip
    raw = yaml.safe_load(path.read_text())
    _, plan = plan_of(path)
    c = parse_cluster(files.dump_yaml(files.derived_cluster(raw, tmp_path, plan), "lab", str(path)))
    assert c.spec.transport == "ssh" and c.spec.simulate is None
    assert c.spec.ssh_config == f"{tmp_path}/ssh_config"
    assert [n.ssh.host for n in c.nodes if n.ssh] == [n.name for n in c.nodes]
    sw = c.spec.switch
    assert sw is not None and (sw.host, sw.api, sw.api_port, sw.password_env) == (
        "198.18.0.2", "rest", 80, None
    )  # fmt: skip
    assert sw.allow_http is True  # the lab switch answers HTTP only, no password
    assert c.spec.thresholds == load_cluster(path).spec.thresholds
    sim = load_cluster(sim_cluster(tmp_path, path))
    assert sim.spec.transport == "sim" and sim.spec.simulate is not None
    assert [f.fault for f in sim.spec.simulate.faults] == ["mtu", "node_unreachable"]


def test_wrappers_pass_socket_node_and_argv_and_hang_only_on_their_arguments(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    tool, echo = tmp_path / "ethtool", tmp_path / "echo"
    tool.write_text(files.sim_wrapper(tmp_path, "spark-1", "ethtool", python=str(fake),
                                      package_root="/pkg"))  # fmt: skip
    echo.write_text(files.hang_wrapper(Hang("echo", ("-S",)), "/bin/echo"))
    for f in (fake, tool, echo):
        f.chmod(0o755)
    out = subprocess.run([str(tool), "-S", "enp1s0f1np1"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=True).stdout  # fmt: skip
    assert out.split("|")[:-1] == [
        "-S", "/pkg/sparkfabric_lab/supervise.py", "--", str(fake), "-S",
        "/pkg/sparkfabric_lab/toolcall.py", f"{tmp_path}/sim.sock", "spark-1", "--", "ethtool",
        "-S", "enp1s0f1np1",
    ]  # fmt: skip
    # The plugin waits for a perftest server with `ss` (flows.LISTEN_WAIT_S): the latency
    # server binds its -p port for real as the bandwidth server does.
    for perftest in ("ib_write_bw", "ib_write_lat"):
        wrapper = files.sim_wrapper(Path("/lab"), "spark-1", perftest, python="py",
                                    package_root="/p")  # fmt: skip
        assert "/p/sparkfabric_lab/supervise.py --perftest --" in wrapper
    ok = subprocess.run([str(echo), "hello"], capture_output=True, text=True, check=True)
    assert ok.stdout == "hello\n"
    assert subprocess.run(["timeout", "0.5", str(echo), "-S", "x"], check=False).returncode == 124


# -- command line ----------------------------------------------------------------------------------


def test_register_wires_up_down_status() -> None:
    parser = argparse.ArgumentParser()
    cli_lab.register(parser.add_subparsers(dest="command"))
    up = ["lab", "up", "c.yaml", "--dir", "/tmp/x", "--prefix", "ab-", "--mgmt", "198.18.9.0/24"]
    args, down = parser.parse_args(up), parser.parse_args(["lab", "down"])
    assert args.func is cli_lab.cmd_up and args.cluster == "c.yaml" and args.prefix == "ab-"
    assert down.func is cli_lab.cmd_down and down.dir == "/run/sparkfabric-lab"
    assert parser.parse_args(["lab", "status", "--dir", "/x"]).func is cli_lab.cmd_status


@pytest.mark.parametrize(
    ("argv", "rc", "stream", "says"),
    [
        # without root
        (["up", str(EXAMPLES / "direct-2.yaml"), "--dir", "/tmp/never"], 1, "err",
         ("needs root", "sudo sparkfabric lab up")),
        (["up", "x.yaml", "--mgmt", "198.18.0.1/24"], 2, "err", ("--mgmt 198.18.0.1/24",)),
        (["status", "--dir", "{tmp}"], 3, "out", ("no lab in {tmp}",)),
    ],
)  # fmt: skip
def test_the_command_line_says_what_is_wrong(
    argv: list[str], rc: int, stream: str, says: tuple[str, ...], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert cli_lab.main([a.format(tmp=tmp_path) for a in argv]) == rc
    text = getattr(capsys.readouterr(), stream)
    assert all(s.format(tmp=tmp_path) in text for s in says), text
    assert not Path("/tmp/never").exists()


def test_up_without_ip_netns_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("PATH", str(tmp_path))  # no `ip` at all
    assert host.why_no_netns() is not None
    rc = cli_lab.main(["up", str(EXAMPLES / "direct-2.yaml"), "--dir", str(tmp_path / "lab")])
    assert rc == 1 and "`ip` is missing: install iproute2" in capsys.readouterr().err
    fake_ip = tmp_path / "ip"
    fake_ip.write_text(
        '#!/bin/sh\necho \'Object "netns" is unknown, try "ip help".\' >&2\nexit 1\n'
    )
    fake_ip.chmod(0o755)
    assert '`ip netns` does not work here (Object "netns" is unknown' in str(host.why_no_netns())
