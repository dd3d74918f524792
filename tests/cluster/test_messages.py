"""Golden tests: what a user reads for a broken cluster.yaml, as rendered text."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent, indent

import pytest

from pytest_sparkfabric.cluster import ConfigError, Problem, load_cluster, parse_cluster
from tests.cluster.samples import RING, SWITCH


def rendered(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_cluster(text)
    return str(info.value)


def golden(text: str) -> str:
    return dedent(text).strip("\n")


def test_issue_example_mesh_of_four_with_a_duplicate_address() -> None:
    text = RING.replace("topology: ring ", "topology: mesh ").replace(
        "1: [192.168.100.12/24, 192.168.101.12/24]", "1: [192.168.100.11/24, 192.168.101.12/24]"
    )
    assert rendered(text) == golden(
        """
        cluster.yaml: 2 problems
          line 1: topology 'mesh' needs exactly 3 nodes (a Spark has 2 ports); got 4.
            Fix: use topology 'ring' or 'switch', or list exactly 3 nodes.
          line 13: nodes[1].ports.1[0] 192.168.100.11/24 is already used by nodes[0].ports.0[0].
            Fix: every rail interface needs its own address.
        """
    )


BROKEN_SHAPE = """\
topolgy: ring
mtu: 90000
transport: sshh
nodes:
  - name: spark-1
    ssh: {host: 10.0.0.11, usr: nvidia}
    ports:
      0: [192.168.100.11/24, 192.168.101.11]
      2: [192.168.106.11/24, 192.168.107.11/24]
  - name: spark 2
    ssh: 10.0.0.12
    ports:
      0: [192.168.102.12/24]
      1: [192.168.100.300/24, {address: 192.168.100.11/24, netdev: enp1s0f1np1-too-long}]
"""


def test_every_shape_problem_at_once_and_the_duplicate_behind_them() -> None:
    assert rendered(BROKEN_SHAPE) == golden(
        """
        cluster.yaml: 12 problems
          line 1: topolgy is not a known key, and topology is missing.
            Fix: did you mean 'topology'?
          line 2: mtu 90000 is too large: it must be at most 9216.
            Fix: use a value from 576 to 9216 (9000 for jumbo frames, 1500 is Ethernet's default).
          line 3: transport 'sshh' is not one of ssh, sim, replay.
            Fix: did you mean 'ssh'? Use one of ssh, sim, replay.
          line 6: nodes[0].ssh.usr is not a known key.
            Fix: did you mean 'user'? The keys of ssh are: host, user, port, identity_file.
          line 8: nodes[0].ports.0[1] '192.168.101.11' has no prefix length.
            Fix: write it with its subnet, e.g. 192.168.101.11/24.
          line 9: nodes[0].ports.2 is not a QSFP port: a Spark has ports 0 and 1 (0 is the cage nearest the RJ45 port).
            Fix: use 0 or 1.
          line 10: nodes[1].name 'spark 2' is not valid: a name starts with a letter or digit and holds only letters, digits, '.', '_', '-'.
            Fix: write it like `name: spark-1`.
          line 11: nodes[1].ssh must be a mapping (key: value); got '10.0.0.12'.
            Fix: write it like `ssh: {host: 10.0.0.12}`.
          line 13: nodes[1].ports.0 lists 1 of its 2 rail addresses.
            Fix: give both: `[192.168.100.11/24, 192.168.101.11/24]` (one for each rail: the port's two PCIe halves).
          line 14: nodes[1].ports.1[0] '192.168.100.300/24' is not an IPv4 address with a prefix length.
            Fix: write it like 192.168.100.11/24.
          line 14: nodes[1].ports.1[1] 192.168.100.11/24 is already used by nodes[0].ports.0[0].
            Fix: every rail interface needs its own address.
          line 14: nodes[1].ports.1[1].netdev 'enp1s0f1np1-too-long' is too long: at most 15 characters.
            Fix: use letters, digits, '.', '_' and '-' only, at most 15, not starting with '.' or '-'.
        """  # noqa: E501
    )


def test_ring_listed_in_rack_order_not_cable_order() -> None:
    lines = RING.splitlines(keepends=True)
    spark2, spark3 = lines[8:13], lines[13:18]
    text = "".join(lines[:8] + spark3 + spark2 + lines[18:])
    assert rendered(text) == golden(
        """
        cluster.yaml: 1 problem
          line 3: nodes are not listed in cable order: by their addresses, port 0 of spark-1 is cabled to port 1 of spark-2, not of spark-3.
            Fix: list the nodes as spark-1, spark-2, spark-3, spark-4 (port 0 of each to port 1 of the next).
        """  # noqa: E501
    )


def test_switch_cross_references() -> None:
    text = (
        SWITCH.replace(
            "1: [192.168.100.13/24, 192.168.101.13/24]", "1: [192.168.110.13/24, 192.168.101.13/24]"
        )
        .replace("spark-3: qsfp56-dd-2-1", "spark-33: qsfp56-dd-1-5")
        .replace("launch_node: spark-2", "launch_node: spark-9")
        .replace("rail_rdma_gbps: 90", "rail_rdma_gpbs: 90")
    )
    out = rendered(text)
    assert out.startswith("cluster.yaml: 6 problems\n")
    for expected in [
        """
          line 14: nodes[2].ports.1[0] 192.168.110.13/24 is not in 192.168.100.0/24, the rail 0 subnet of spark-1 (192.168.100.11/24).
            Fix: every node needs one address in each rail's subnet: rail 0 in 192.168.100.0/24.
        """,  # noqa: E501
        """
          line 20: switch.ports has no switch port for node 'spark-3'.
            Fix: add `spark-3: <switch interface>` (e.g. qsfp56-dd-1-1).
          line 20: switch.ports.spark-33 is not a node of this file (did you mean 'spark-3'?).
            Fix: name one of: spark-1, spark-2, spark-3.
          line 20: switch.ports.spark-33 qsfp56-dd-1-5 is already the switch port of spark-2.
            Fix: each node has its own switch port (breakout leg).
        """,
        """
          line 22: thresholds.rail_rdma_gpbs is not a known threshold (did you mean 'rail_rdma_gbps'?).
        """,  # noqa: E501
        """
          line 23: nccl.launch_node 'spark-9' is not a node of this file (did you mean 'spark-3'?).
            Fix: name one of: spark-1, spark-2, spark-3.
        """,
    ]:
        assert "\n" + indent(dedent(expected).strip("\n"), "  ") + "\n" in out + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "",
            """
            cluster.yaml: 1 problem
              the file is empty.
                Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
            """,
        ),
        (
            "# only a comment\n",
            """
            cluster.yaml: 1 problem
              the file is empty.
                Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
            """,
        ),
        (
            "- spark-1\n- spark-2\n",
            """
            cluster.yaml: 1 problem
              line 1: the top level must be a mapping of keys (topology:, nodes:, ...); got a list of 2 items.
                Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
            """,  # noqa: E501
        ),
        (
            "topology: ring\nnodes: [\n",
            """
            cluster.yaml: 1 problem
              line 3: the file is not valid YAML: while parsing a flow node, expected the node content, but found '<stream end>'.
                Fix: fix the YAML at that line.
            """,  # noqa: E501
        ),
        (
            "topology: direct\ntopology: ring\nnodes: []\n",
            """
            cluster.yaml: 2 problems
              line 2: topology 'ring' needs 4 or more nodes (a Spark has 2 ports); got 0.
                Fix: list 4 or more nodes.
              line 2: topology is given twice (first on line 1).
                Fix: keep one of them; YAML would silently use the last.
            """,
        ),
        (
            "a: &a [*a]\n",
            """
            cluster.yaml: 1 problem
              the file cannot be read: a YAML alias refers to the value that contains it.
                Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
            """,
        ),
    ],
    ids=["empty", "comment", "list", "syntax", "twice", "recursive"],
)
def test_files_that_are_not_cluster_files(text: str, expected: str) -> None:
    assert rendered(text) == golden(expected)


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("mtu: nine thousand", "line 2: mtu must be a whole number; got 'nine thousand'."),
        ("mtu: 9000.5", "line 2: mtu must be a whole number; got the number 9000.5."),
        ("arp_sysctls: maybe", "line 2: arp_sysctls must be true or false; got 'maybe'."),
        (
            "soak: {duration_s: 0}",
            "line 2: soak.duration_s 0 is too small: it must be more than 0.\n"
            "    Fix: use a value above 0.",
        ),
        (
            "nccl: {timeout_s: .inf}",
            "line 2: nccl.timeout_s must be a finite number; got the number inf.",
        ),
        (
            "bandwidth: {qps: 100}",
            "line 2: bandwidth.qps 100 is too large: it must be at most 64.\n"
            "    Fix: use a value from 1 to 64.",
        ),
        (
            "nccl: {launcher: 'mpirun -np {rank} {binary}'}",
            "line 2: nccl.launcher uses unknown placeholder(s) {rank}.\n"
            "    Fix: the placeholders filled in here are {ranks}, {hosts}, {env_flags}, "
            "{binary}, {size}, {mgmt_netdev}.",
        ),
        (
            "switch: {host: s, user: u, password_env: 'my password'}",
            "line 2: switch.password_env 'my password' is not valid: it must be the name of an "
            "environment variable (letters, digits, '_').\n"
            "    Fix: write it like `password_env: SWITCH_PASSWORD`.",
        ),
        (
            "simulate: {faults: [{fault: link_dwn, node: spark-1}]}",
            "line 2: simulate.faults[0].fault 'link_dwn' is not one of link_down,",
        ),
        (
            "thresholds: {ber_max: -1}",
            "line 2: thresholds.ber_max -1 is too small: it must be at least 0.",
        ),
    ],
)
def test_value_messages(snippet: str, expected: str) -> None:
    text = "topology: direct\n" + snippet + "\n" + "\n".join(DIRECT_NODES)
    assert expected in rendered(text)


DIRECT_NODES = [
    "nodes:",
    "  - {name: spark-1, ssh: {host: a}, ports: {1: [192.168.100.11/24, 192.168.101.11/24]}}",
    "  - {name: spark-2, ssh: {host: b}, ports: {1: [192.168.100.12/24, 192.168.101.12/24]}}",
]


def test_fault_names_are_suggested() -> None:
    text = "topology: direct\nsimulate: {faults: [{fault: link_dwn}]}\n" + "\n".join(DIRECT_NODES)
    assert "Fix: did you mean 'link_down'? Use one of link_down, autoneg_failed," in rendered(text)


def test_transport_case_is_forgiven_in_the_suggestion() -> None:
    text = "topology: direct\ntransport: SSH\n" + "\n".join(DIRECT_NODES)
    assert "Fix: did you mean 'ssh'? Use one of ssh, sim, replay." in rendered(text)


def test_a_quoted_number_is_suggested_for_a_numeric_name() -> None:
    text = "topology: direct\n" + "\n".join(DIRECT_NODES).replace("name: spark-1", "name: 1")
    assert rendered(text) == golden(
        """
        cluster.yaml: 1 problem
          line 3: nodes[0].name must be text; got the number 1.
            Fix: put it in quotes: `name: '1'`.
        """
    )


def test_problem_render_adds_full_stops_once() -> None:
    p = Problem(("mtu",), 3, "90000 is too large.", "use 9000")
    assert p.render() == "  line 3: mtu 90000 is too large.\n    Fix: use 9000."
    assert Problem((), None, "the file is empty", "").render() == "  the file is empty."


def test_config_error_is_never_empty() -> None:
    err = ConfigError("x.yaml", [])
    assert len(err.problems) == 1
    assert str(err).startswith("x.yaml: 1 problem")


def test_load_cluster_file_problems(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the file does not exist"):
        load_cluster(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="the path is a directory"):
        load_cluster(tmp_path)
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"topology: \xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_cluster(bad)
    good = tmp_path / "cluster.yaml"
    good.write_text(RING)
    cluster = load_cluster(good)
    assert cluster.source == good.resolve()
    assert cluster.line_of(("nodes", 1, "ports", 0)) == 12
