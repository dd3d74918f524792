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
from pytest_sparkfabric.probes import sysfs
from sparkfabric_lab import LabError, boot, files, host, systree
from sparkfabric_lab import cli as cli_lab
from sparkfabric_lab.assemble import build_plan
from sparkfabric_lab.plan import SWITCH_BRIDGE, Hang, LabPlan
from tests.lab.labkit import EXAMPLES, cluster_file

MGMT = IPv4Network("198.18.0.0/24")
TOPOLOGIES = {"direct-2": (2, 2), "mesh-3": (3, 6), "ring-4": (4, 8), "switch-4": (4, 8)}


def plan_of(path: Path, prefix: str = "sf-") -> tuple[Cluster, LabPlan]:
    cluster = load_cluster(path)
    return cluster, build_plan(cluster, prefix=prefix, mgmt=MGMT)


def with_faults(tmp_path: Path, example: str, *faults: dict[str, Any], **extra: Any) -> LabPlan:
    return plan_of(cluster_file(tmp_path, example, faults=faults, **extra))[1]


def test_every_lab_example_is_planned_below() -> None:
    assert {p.stem for p in EXAMPLES.glob("*.yaml")} == set(TOPOLOGIES)


@pytest.mark.parametrize("example", sorted(TOPOLOGIES))
def test_examples_build_with_real_spark_names(example: str) -> None:
    cluster, plan = plan_of(EXAMPLES / f"{example}.yaml")
    nodes, fabric_wires = TOPOLOGIES[example]
    spark_names = {hardware.rail_names(p, r).netdev for p in (0, 1) for r in (0, 1)}
    switch = 1 if cluster.topology == "switch" else 0
    assert len(plan.namespaces) == nodes + switch
    assert len(plan.wires) == fabric_wires + nodes + switch
    for w in plan.wires:
        for end in (w.a, w.b):
            assert len(end.name) <= 15
            if end.ns in {n.ns for n in plan.nodes} and end.name != hardware.MGMT_NETDEV:
                assert end.name in spark_names
                assert end.mtu == cluster.mtu
    assert all(len(name) <= 15 for name in plan.host_links)
    for rail in cluster.rails:
        assert rail.address.ip in IPv4Network("198.18.0.0/15")
    assert [str(n.mgmt) for n in plan.nodes] == [f"198.18.0.{11 + i}/24" for i in range(nodes)]


def test_switch_example_says_what_the_lab_builds() -> None:
    plan = plan_of(EXAMPLES / "switch-4.yaml")[1]
    comment = "".join(
        ln for ln in (EXAMPLES / "switch-4.yaml").read_text().splitlines() if ln.startswith("#")
    )
    assert f"one Linux bridge ({SWITCH_BRIDGE})" in comment and "per rail" not in comment
    assert "pytest --cluster=/run/sparkfabric-lab/cluster.yaml" in comment
    assert plan.switch_mgmt is not None and f": {plan.switch_mgmt.ip})" in comment


def test_p2p_cables_join_the_planned_rails() -> None:
    cluster, plan = plan_of(EXAMPLES / "ring-4.yaml")
    ends = {(w.a.ns, w.a.name, w.b.ns, w.b.name) for w in plan.wires}
    from pytest_sparkfabric.cluster.plan import plan as topo_plan

    for link in topo_plan(cluster).links:
        assert (
            f"sf-{link.a.node}", link.a.netdev, f"sf-{link.b.node}", link.b.netdev
        ) in ends  # fmt: skip


def test_switch_is_one_bridge_with_a_leg_per_rail() -> None:
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


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"prefix": "Bad_prefix"}, "prefix"),
        ({"prefix": "toolong1-"}, "prefix"),
        ({"mgmt": "10.0.0.0/24"}, "outside 198.18.0.0/15"),
        ({"mgmt": "198.18.0.0/29"}, "too small"),
        ({"mgmt": "198.19.0.0/24"}, "overlaps the management subnet"),
    ],
)
def test_lab_settings_are_checked(edit: dict[str, str], needle: str) -> None:
    cluster = load_cluster(EXAMPLES / "direct-2.yaml")
    with pytest.raises(LabError, match=needle):
        build_plan(
            cluster,
            prefix=edit.get("prefix", "sf-"),
            mgmt=IPv4Network(edit.get("mgmt", "198.18.0.0/24")),
        )


def test_fabric_outside_the_benchmarking_range_is_refused(tmp_path: Path) -> None:
    text = (EXAMPLES / "direct-2.yaml").read_text().replace("198.19.", "192.168.")
    cluster = parse_cluster(text)
    with pytest.raises(LabError, match=r"spark-1:rail0 192\.168\.0\.11/24 is outside"):
        build_plan(cluster, prefix="sf-", mgmt=MGMT)


# -- faults (what each makes of the kernel, and what fails then: test_lab_faults.CASES) ------------


def test_mtu_on_a_switch_port(tmp_path: Path) -> None:
    plan = with_faults(tmp_path, "switch-4", {"fault": "mtu", "switch_port": "qsfp56-dd-1-5",
                                              "value": 1500})  # fmt: skip
    legs = {w.b.name: w.b.mtu for w in plan.wires if w.b.ns == "sf-switch" and w.b.master}
    assert legs == {"p1r0": 9216, "p1r1": 9216, "p2r0": 1500, "p2r1": 1500,
                    "p3r0": 9216, "p3r1": 9216, "p4r0": 9216, "p4r1": 9216}  # fmt: skip


def test_node_rp_filter_strict_without_rail_sets_all(tmp_path: Path) -> None:
    plan = with_faults(tmp_path, "direct-2", {"fault": "rp_filter_strict", "node": "spark-1"})
    assert dict(plan.node("spark-1").sysctls)["net/ipv4/conf/all/rp_filter"] == "1"


def test_only_a_hung_tool_stays_out_of_the_simulator(tmp_path: Path) -> None:
    plan = with_faults(
        tmp_path, "direct-2",
        {"fault": "node_unreachable", "node": "spark-2"},
        {"fault": "command_hangs", "command": "ethtool -S", "node": "spark-1"},
        {"fault": "nccl_socket", "node": "spark-1"},
        {"fault": "nic_throttled", "node": "spark-1"},
        {"fault": "mtu", "node": "spark-1", "rail": 0, "value": 1500},
    )  # fmt: skip
    assert plan.sim_faults == (0, 2, 3, 4)  # all but command_hangs, a wrapper of its own
    assert not plan.node("spark-2").sshd and plan.node("spark-1").sshd
    assert plan.node("spark-1").hangs == (Hang("ethtool", ("-S",)),)
    assert plan.node("spark-2").hangs == ()
    assert "NCCL_NET=Socket" in plan.node("spark-1").nccl_conf
    assert "NCCL_NET" not in plan.node("spark-2").nccl_conf


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
    node = plan.node("spark-1")
    text = files.sshd_config(tmp_path, node)
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
    derived = files.dump_yaml(files.derived_cluster(raw, tmp_path, plan), "lab", str(path))
    c = parse_cluster(derived)
    assert c.spec.transport == "ssh" and c.spec.simulate is None
    assert c.spec.ssh_config == f"{tmp_path}/ssh_config"
    assert [n.ssh.host for n in c.nodes if n.ssh] == [n.name for n in c.nodes]
    assert c.spec.switch is not None and c.spec.switch.host == "198.18.0.2"
    assert (c.spec.switch.api, c.spec.switch.api_port, c.spec.switch.password_env) == (
        "rest",
        80,
        None,
    )
    assert c.spec.switch.allow_http is True  # the lab switch answers HTTP only, no password
    assert c.spec.thresholds == load_cluster(path).spec.thresholds
    sim = parse_cluster(files.dump_yaml(files.sim_cluster(raw, plan), "sim", str(path)))
    assert sim.spec.transport == "sim"
    assert sim.spec.simulate is not None
    assert [f.fault for f in sim.spec.simulate.faults] == ["mtu", "node_unreachable"]


def test_sim_wrapper_passes_socket_node_and_argv(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    fake.chmod(0o755)
    tool = tmp_path / "bin" / "ethtool"
    tool.parent.mkdir()
    tool.write_text(files.sim_wrapper(tmp_path, "spark-1", "ethtool", python=str(fake),
                                      package_root="/pkg"))  # fmt: skip
    tool.chmod(0o755)
    out = subprocess.run([str(tool), "-S", "enp1s0f1np1"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=True).stdout  # fmt: skip
    assert out.split("|")[:-1] == [
        "-S", "/pkg/sparkfabric_lab/supervise.py", "--", str(fake), "-S",
        "/pkg/sparkfabric_lab/toolcall.py", f"{tmp_path}/sim.sock", "spark-1", "--", "ethtool",
        "-S", "enp1s0f1np1",
    ]  # fmt: skip


@pytest.mark.parametrize("tool", ["ib_write_bw", "ib_write_lat"])
def test_perftest_servers_hold_their_port_in_the_lab(tool: str) -> None:
    """The plugin waits for a perftest server with `ss` (flows.LISTEN_WAIT_S): the latency
    server binds its -p port for real as the bandwidth server does."""
    wrapper = files.sim_wrapper(Path("/lab"), "spark-1", tool, python="py", package_root="/p")
    assert "/p/sparkfabric_lab/supervise.py --perftest --" in wrapper


def test_hang_wrapper_hangs_only_on_its_arguments(tmp_path: Path) -> None:
    tool = tmp_path / "echo"
    tool.write_text(files.hang_wrapper(Hang("echo", ("-S",)), "/bin/echo"))
    tool.chmod(0o755)
    ok = subprocess.run([str(tool), "hello"], capture_output=True, text=True, check=True)
    assert ok.stdout == "hello\n"
    hung = subprocess.run(["timeout", "0.5", str(tool), "-S", "x"], check=False)
    assert hung.returncode == 124


# -- command line ----------------------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_lab.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["lab", *argv])


def test_register_wires_up_down_status() -> None:
    args = parse("up", "c.yaml", "--dir", "/tmp/x", "--prefix", "ab-", "--mgmt", "198.18.9.0/24")
    assert args.func is cli_lab.cmd_up and args.cluster == "c.yaml" and args.prefix == "ab-"
    assert parse("down").func is cli_lab.cmd_down and parse("down").dir == "/run/sparkfabric-lab"
    assert parse("status", "--dir", "/x").func is cli_lab.cmd_status


def test_up_without_root_says_so(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    rc = cli_lab.main(["up", str(EXAMPLES / "direct-2.yaml"), "--dir", "/tmp/never"])
    err = capsys.readouterr().err
    assert rc == 1 and "needs root" in err and "sudo sparkfabric lab up" in err
    assert not Path("/tmp/never").exists()


def test_up_without_ip_netns_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("PATH", str(tmp_path))  # no `ip` at all
    assert host.why_no_netns() is not None
    rc = cli_lab.main(["up", str(EXAMPLES / "direct-2.yaml"), "--dir", str(tmp_path / "lab")])
    err = capsys.readouterr().err
    assert rc == 1 and "`ip` is missing: install iproute2" in err
    fake_ip = tmp_path / "ip"
    fake_ip.write_text(
        '#!/bin/sh\necho \'Object "netns" is unknown, try "ip help".\' >&2\nexit 1\n'
    )
    fake_ip.chmod(0o755)
    assert '`ip netns` does not work here (Object "netns" is unknown' in str(host.why_no_netns())


def test_bad_mgmt_is_a_usage_error(capsys: Any) -> None:
    assert cli_lab.main(["up", "x.yaml", "--mgmt", "198.18.0.1/24"]) == 2
    assert "--mgmt 198.18.0.1/24" in capsys.readouterr().err


def test_status_of_no_lab(tmp_path: Path, capsys: Any) -> None:
    assert cli_lab.main(["status", "--dir", str(tmp_path)]) == 3
    assert f"no lab in {tmp_path}" in capsys.readouterr().out
