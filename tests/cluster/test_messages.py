"""What a user reads for a broken cluster.yaml, as rendered text: every message once.

Each row is a file (a sample with one change, or a short file of its own) and every problem
line `sparkfabric check` and `pytest --cluster` print for it, fix included.
"""

# ruff: noqa: E501

from __future__ import annotations

import os
import re
from pathlib import Path
from textwrap import dedent

import pytest

from pytest_sparkfabric.cluster import ConfigError, Problem, load_cluster, parse_cluster
from tests.cluster.samples import DIRECT, MESH, RING, SIM, SWITCH

NODES = (
    "nodes:\n"
    "  - {name: spark-1, ssh: {host: a}, ports: {1: [192.168.100.11/24, 192.168.101.11/24]}}\n"
    "  - {name: spark-2, ssh: {host: b}, ports: {1: [192.168.100.12/24, 192.168.101.12/24]}}\n"
)


def top(*lines: str) -> str:
    """A two-node direct file with `lines` after its topology (line 2 on)."""
    return "topology: direct\n" + "".join(line + "\n" for line in lines) + NODES


def edit(text: str, *changes: tuple[str, str]) -> str:
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def fault(spec: str) -> str:
    return edit(SIM, (SIM_FAULTS, f"    - {spec}"))


SIM_FAULTS = (
    "    - {fault: link_down, node: spark-2, port: 1}\n"
    "    - {fault: lane_degradation, node: spark-1, lane: 2, onset_c: 75}"
)


def ring_order(*order: int) -> str:
    """samples.RING with its nodes (5 lines each from line 4) listed in `order`."""
    lines = RING.splitlines(keepends=True)
    nodes = ["".join(lines[3 + 5 * k : 8 + 5 * k]) for k in order]
    return "".join(lines[:3]) + "".join(nodes) + "".join(lines[23:])


CASES: dict[str, str] = {
    "empty": "",
    "comment": "# only a comment\n",
    "list": "- spark-1\n- spark-2\n",
    "syntax": "topology: ring\nnodes: [\n",
    "recursive": "a: &a [*a]\n",
    "alias-bomb": "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9)),
    "twice": "topology: direct\ntopology: ring\nnodes: []\n",
    "missing": "topology: direct\n",
    "unknown-top": top("colour: blue"),
    "not-int": top("mtu: nine thousand"),
    "int-from-float": top("mtu: 9000.5"),
    "bool": top("arp_sysctls: maybe"),
    "more-than": top("soak: {duration_s: 0}"),
    "at-least": top("thresholds: {ber_max: -1}"),
    "finite": top("nccl: {timeout_s: .inf}"),
    "choice": top("link_speed: 400G"),
    "choice-case": top("transport: SSH"),
    "threshold-name": top("thresholds: {rail_rdma_gpbs: 90}"),
    "link-speed-key": edit(top(), ("host: a}, ports", "host: a}, link_speed: {3: 100G}, ports")),
    "env-key-type": top("nccl: {env: {1: x}}"),
    "quote-number": edit(top(), ("name: spark-1", "name: 1")),
    "quote-bool": edit(top(), ("host: a", "host: yes")),
    "mapping-item": "topology: direct\nnodes: [5]\n",
    "rail-type": edit(top(), ("[192.168.100.11/24,", "[5,")),
    "empty-text": edit(top(), ("host: a", "host: a, identity_file: ''")),
    "required-in-list": top("cables: {approved: [{vendor: Amphenol}]}"),
    "placeholder": top("nccl: {launcher: 'mpirun -np {rank} {binary}'}"),
    "password-env": top("switch: {host: s, user: u, password_env: 'my password'}"),
    "size-pattern": top("nccl: {size: 16 GB}"),
    "node-count": edit(MESH, ("topology: mesh", "topology: ring")),
    "unique-names-hosts": edit(
        RING, ("name: spark-3", "name: spark-1"), ("host: 10.0.0.14", "host: 10.0.0.12")
    ),
    "usable-address": edit(DIRECT, ("192.168.100.12/24", "192.168.100.12/32")),
    "same-port": edit(DIRECT, ("      1: [192.168.100.12/24", "      0: [192.168.100.12/24")),
    "one-cabled-port": edit(
        DIRECT,
        (
            "1: [192.168.100.11/24, 192.168.101.11/24]",
            "0: [192.168.102.11/24, 192.168.103.11/24]\n      1: [192.168.100.11/24, 192.168.101.11/24]",
        ),
    ),
    "both-ports": edit(RING, ("      0: [192.168.104.13/24, 192.168.105.13/24]\n", "")),
    "cable-subnet": edit(MESH, ("1: [192.168.100.12/24", "1: [192.168.110.12/24")),
    "cable-order": ring_order(0, 2, 1, 3),
    "cable-subnet-reused": edit(
        RING,
        ("0: [192.168.104.13/24", "0: [192.168.100.13/24"),
        ("1: [192.168.104.14/24", "1: [192.168.100.14/24"),
    ),
    "rail-subnet": edit(SWITCH, ("192.168.101.12/24", "192.168.111.12/24")),
    "arp-flux": edit(
        DIRECT,
        ("192.168.101.11/24", "192.168.100.21/24"),
        ("192.168.101.12/24", "192.168.100.22/24"),
    ),
    "arp-sysctls-keeps-cables-apart": edit(
        RING,
        ("mtu: 9000", "arp_sysctls: true"),
        ("1: [192.168.106.11/24", "1: [192.168.100.21/24"),
        ("0: [192.168.106.14/24", "0: [192.168.100.24/24"),
    ),
    "ssh-needed": edit(DIRECT, ("    ssh: {host: 10.0.0.12, user: nvidia}\n", "")),
    "replay-needs-dir": edit(DIRECT, ("topology: direct", "topology: direct\ntransport: replay")),
    "switch-needed": edit(
        SWITCH, (SWITCH[SWITCH.index("switch:") : SWITCH.index("transport:")], "")
    ),
    "switch-only-for-switch": DIRECT + "switch: {host: s, user: u}\n",
    "switch-ports": edit(SWITCH, ("spark-3: qsfp56-dd-2-1", "spark-33: qsfp56-dd-1-5")),
    "switch-leg-speed": edit(
        SWITCH, ("  ports: {spark-1", "  link_speed: {qsfp56-dd-1-2: 100G}\n  ports: {spark-1")
    ),
    "port-speed": edit(
        DIRECT, ("  - name: spark-2\n", "  - name: spark-2\n    link_speed: {0: 100G}\n")
    ),
    "launch-node": edit(SWITCH, ("launch_node: spark-2", "launch_node: spark-9")),
    "fault-needs": fault("{fault: link_down}"),
    "fault-node": fault("{fault: link_down, node: spark-9}"),
    "fault-target": fault("{fault: nic_throttled, node: spark-1, lane: 2}"),
    "fault-switch": fault("{fault: autoneg_failed, switch_port: x}"),
    "fault-port": fault("{fault: link_down, node: spark-1, port: 0}"),
    "fault-mtu": fault("{fault: mtu, value: 1500}"),
    "rules-beside-a-broken-shape": edit(
        RING,
        ("mtu: 9000", "mtu: jumbo"),
        ("name: spark-4", "name: spark-1"),
        ("transport: ssh", "transport: ssh\nthresholds: {rail_rdma_gbsp: 90}"),
    ),
}

# Every problem line of each case, as `sparkfabric check` prints it.
EXPECTED = """
[empty]
  the file is empty.
    Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
[comment]
  the file is empty.
    Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
[list]
  line 1: the top level must be a mapping of keys (topology:, nodes:, ...); got a list of 2 items.
    Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
[syntax]
  line 3: the file is not valid YAML: while parsing a flow node, expected the node content, but found '<stream end>'.
    Fix: fix the YAML at that line.
[recursive]
  the file cannot be read: a YAML alias refers to the value that contains it.
    Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
[alias-bomb]
  the file cannot be read: the document expands to more than 50000 values.
    Fix: start from the output of `sparkfabric init --topology ... --nodes ...`.
[twice]
  line 2: topology 'ring' needs 4 or more nodes (a Spark has 2 ports); got 0.
    Fix: list 4 or more nodes.
  line 2: topology is given twice (first on line 1).
    Fix: keep one of them; YAML would silently use the last.
[missing]
  line 1: nodes is missing.
    Fix: add `nodes: [{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}, ...]`.
[unknown-top]
  line 2: colour is not a known key.
    Fix: remove it; the top-level keys are: topology, mtu, link_speed, nodes, switch, transport, ssh_config, output_cap_mib, arp_sysctls, thresholds, cables, nccl, soak, bandwidth, simulate, replay_dir.
[not-int]
  line 2: mtu must be a whole number; got 'nine thousand'.
    Fix: write it like `mtu: 9000`.
[int-from-float]
  line 2: mtu must be a whole number; got the number 9000.5.
    Fix: write it like `mtu: 9000`.
[bool]
  line 2: arp_sysctls must be true or false; got 'maybe'.
    Fix: write true or false.
[more-than]
  line 2: soak.duration_s 0 is too small: it must be more than 0.
    Fix: use a value above 0.
[at-least]
  line 2: thresholds.ber_max -1 is too small: it must be at least 0.
    Fix: use a value of at least 0.
[finite]
  line 2: nccl.timeout_s must be a finite number; got the number inf.
    Fix: use a value above 0.
[choice]
  line 2: link_speed '400G' is not one of 200G, 100G.
    Fix: did you mean '200G'? Use one of 200G, 100G.
[choice-case]
  line 2: transport 'SSH' is not one of ssh, sim, replay.
    Fix: did you mean 'ssh'? Use one of ssh, sim, replay.
[threshold-name]
  line 2: thresholds.rail_rdma_gpbs is not a known threshold.
    Fix: did you mean 'rail_rdma_gbps'? Use one of loopback_gbps, rail_rdma_gbps, pair_rdma_gbps, tcp_pair_gbps, nccl_busbw_gbytes_s, ber_max, lane_ratio_max, lane_floor_per_s, lane_warn_ratio, lane_heat_growth_min, ping_loss_pct, nic_temp_max_c, nic_rise_min_c, discard_pct, rdma_lat_us.
[link-speed-key]
  line 3: nodes[0].link_speed.3 is not a QSFP port: a Spark has ports 0 and 1 (0 is the cage nearest the RJ45 port).
    Fix: use 0 or 1.
[env-key-type]
  line 2: nccl.env[1] is a key that must be text.
    Fix: write the key as text.
[quote-number]
  line 3: nodes[0].name must be text; got the number 1.
    Fix: put it in quotes: `name: '1'`.
[quote-bool]
  line 3: nodes[0].ssh.host must be text; got true.
    Fix: put it in quotes: YAML reads yes, no, on, off, true and false as true or false.
[mapping-item]
  line 2: nodes[0] must be a mapping (key: value); got the number 5.
    Fix: write it like `{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}`.
[rail-type]
  line 3: nodes[0].ports.1[0] must be an address like 192.168.100.11/24 or a mapping {address: ..., netdev: ..., rdma: ...}; got the number 5.
    Fix: write it like 192.168.100.11/24.
[empty-text]
  line 3: nodes[0].ssh.identity_file must not be empty.
    Fix: write `identity_file: ~/.ssh/id_ed25519`.
[required-in-list]
  line 2: cables.approved[0].part is missing.
    Fix: add `part: NJAAKK-N911`.
[placeholder]
  line 2: nccl.launcher uses unknown placeholder(s) {rank}.
    Fix: the placeholders filled in here are {ranks}, {hosts}, {env_flags}, {binary}, {size}, {mgmt_netdev}.
[password-env]
  line 2: switch.password_env 'my password' is not an environment variable name: it holds ' '.
    Fix: a name holds letters, digits and '_' only and does not start with a digit, e.g. SWITCH_PASSWORD.
[size-pattern]
  line 2: nccl.size '16 GB' is not valid: a size is a whole number with an optional K, M or G.
    Fix: write it like `size: 16G`.
[node-count]
  line 1: topology 'ring' needs 4 or more nodes (a Spark has 2 ports); got 3.
    Fix: use topology 'mesh' or 'switch', or list 4 or more nodes.
[unique-names-hosts]
  line 14: nodes[2].name 'spark-1' is already the name of nodes[0].
    Fix: give every node its own name.
  line 20: nodes[3].ssh.host 10.0.0.12 is already the ssh host of nodes[1].
    Fix: every node needs its own management address.
[usable-address]
  line 10: nodes[1].ports.1[0] 192.168.100.12/32 is not a usable host address of its subnet.
    Fix: use a host address inside a subnet of /30 or wider, e.g. 192.168.100.11/24.
  line 10: nodes[1].ports.1[0] 192.168.100.12/32 is not in 192.168.100.0/24, the rail 0 subnet of spark-1 (192.168.100.11/24).
    Fix: every node needs one address in each rail's subnet: rail 0 in 192.168.100.0/24.
[same-port]
  line 9: nodes[1].ports uses port 0; nodes[0] uses port 1.
    Fix: a direct cluster uses the same port number on every node: cable port 1 (or move the others).
[one-cabled-port]
  line 5: nodes[0].ports lists ports 0 and 1; a direct node has one cabled port.
    Fix: list only the cabled port (the same port number on every node).
[both-ports]
  line 16: nodes[2].ports lists port 1; a ring node is cabled on both ports 0 and 1.
    Fix: list both ports, each with its two rail addresses.
[cable-subnet]
  line 13: nodes[1].ports.1[0] 192.168.110.12/24 is not in 192.168.100.0/24, the subnet of the other end of its cable, spark-1:p0rail0 (192.168.100.11/24).
    Fix: both ends of a cable's rail need addresses in one subnet; nodes are cabled port 0 to port 1 of the next node listed.
[cable-order]
  line 3: nodes are not listed in cable order: by their addresses, port 0 of spark-1 is cabled to port 1 of spark-2, not of spark-3.
    Fix: list the nodes as spark-1, spark-2, spark-3, spark-4 (port 0 of each to port 1 of the next).
[cable-subnet-reused]
  line 17: nodes[2].ports.0[0] 192.168.100.13/24 is in 192.168.100.0/24, already the subnet of rail 0 of cable spark-1:p0<->spark-2:p1.
    Fix: every cable's rail needs its own subnet (2 per cable).
[rail-subnet]
  line 10: nodes[1].ports.1[1] 192.168.111.12/24 is not in 192.168.101.0/24, the rail 1 subnet of spark-1 (192.168.101.11/24).
    Fix: every node needs one address in each rail's subnet: rail 1 in 192.168.101.0/24.
[arp-flux]
  line 6: nodes[0].ports.1[1] 192.168.100.21/24 is in 192.168.100.0/24 like nodes[0].ports.1[0] (192.168.100.11/24) (so do spark-2): two interfaces of one node in one subnet cause ARP flux and rp_filter drops.
    Fix: one subnet per rail; or set arp_ignore=1, arp_announce=2 and rp_filter=2 on every node and say arp_sysctls: true.
[arp-sysctls-keeps-cables-apart]
  line 22: nodes[3].ports.0[0] 192.168.100.24/24 is in 192.168.100.0/24, already the subnet of rail 0 of cable spark-1:p0<->spark-2:p1.
    Fix: every cable's rail needs its own subnet (2 per cable).
[ssh-needed]
  line 7: nodes[1] (spark-2) has no ssh: and transport is 'ssh'.
    Fix: add ssh: {host: <management address>, user: <user>}, or use transport: sim.
[replay-needs-dir]
  line 2: transport 'replay' needs replay_dir: the folder of a recording.
    Fix: add replay_dir: <folder>, or use transport ssh or sim.
[switch-needed]
  line 1: topology 'switch' needs a switch: section that names each node's switch port.
    Fix: add switch: {host: ..., user: ..., password_env: SWITCH_PASSWORD, ports: {<node>: qsfp56-dd-1-1, ...}}.
[switch-only-for-switch]
  line 11: switch is only for topology 'switch'; this file says 'direct'.
    Fix: remove the switch: section, or set topology: switch.
[switch-ports]
  line 20: switch.ports has no switch port for node 'spark-3'.
    Fix: add `spark-3: <switch interface>` (e.g. qsfp56-dd-1-1).
  line 20: switch.ports.spark-33 is not a node of this file (did you mean 'spark-3'?).
    Fix: name one of: spark-1, spark-2, spark-3.
  line 20: switch.ports.spark-33 qsfp56-dd-1-5 is already the switch port of spark-2.
    Fix: each node has its own switch port (breakout leg).
[switch-leg-speed]
  line 20: switch.link_speed.qsfp56-dd-1-2 is not a switch port of this file (did you mean 'qsfp56-dd-1-5'?).
    Fix: name one of switch.ports: qsfp56-dd-1-1, qsfp56-dd-1-5, qsfp56-dd-2-1.
[port-speed]
  line 8: nodes[1].link_speed.0 names port 0, which is not a cabled port of spark-2.
    Fix: give the speed of a port listed under ports (1).
[launch-node]
  line 23: nccl.launch_node 'spark-9' is not a node of this file (did you mean 'spark-3'?).
    Fix: name one of: spark-1, spark-2, spark-3.
[fault-needs]
  line 6: simulate.faults[0].fault 'link_down' needs 'node'.
    Fix: write {fault: link_down, node: ...} (optional: port).
[fault-node]
  line 6: simulate.faults[0].node 'spark-9' is not a node of this file.
    Fix: name one of: spark-1, spark-2.
[fault-target]
  line 6: simulate.faults[0].lane is not used by fault 'nic_throttled'.
    Fix: write {fault: nic_throttled, node: ...}.
[fault-switch]
  line 6: simulate.faults[0].fault 'autoneg_failed' needs topology 'switch'; this file says 'direct'.
    Fix: remove this fault.
  line 6: simulate.faults[0].switch_port 'x' is not a switch port of this file.
    Fix: switch ports: none (no switch: section).
[fault-port]
  line 6: simulate.faults[0].port 0 is not a cabled port of spark-1.
    Fix: name a cabled port.
[fault-mtu]
  line 6: simulate.faults[0].fault 'mtu' needs a node (and rail) or a switch_port.
    Fix: write {fault: mtu, value: ...} (optional: node, rail, port, switch_port).
[rules-beside-a-broken-shape]
  line 2: mtu must be a whole number; got 'jumbo'.
    Fix: write it like `mtu: 9000`.
  line 19: nodes[3].name 'spark-1' is already the name of nodes[0].
    Fix: give every node its own name.
  line 25: thresholds.rail_rdma_gbsp is not a known threshold.
    Fix: did you mean 'rail_rdma_gbps'? Use one of loopback_gbps, rail_rdma_gbps, pair_rdma_gbps, tcp_pair_gbps, nccl_busbw_gbytes_s, ber_max, lane_ratio_max, lane_floor_per_s, lane_warn_ratio, lane_heat_growth_min, ping_loss_pct, nic_temp_max_c, nic_rise_min_c, discard_pct, rdma_lat_us.
"""


def rendered(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_cluster(text)
    return str(info.value)


_, *_parts = re.split(r"^\[([\w-]+)\]\n", EXPECTED, flags=re.M)
TOLD = dict(zip(_parts[::2], (text.rstrip("\n") for text in _parts[1::2]), strict=True))


def test_every_case_has_its_text() -> None:
    assert list(TOLD) == list(CASES)


@pytest.mark.parametrize("case", CASES)
def test_message(case: str) -> None:
    head, _, body = rendered(CASES[case]).partition("\n")
    n = sum(not line.startswith("    ") for line in body.splitlines())
    assert head == f"cluster.yaml: {n} problem{'s' * (n > 1)}"
    assert body == TOLD[case]


def test_the_design_example_a_mesh_of_four_with_a_duplicate_address() -> None:
    text = edit(
        RING,
        ("topology: ring ", "topology: mesh "),
        ("1: [192.168.100.12/24", "1: [192.168.100.11/24"),
    )
    assert rendered(text) == dedent(
        """\
        cluster.yaml: 2 problems
          line 1: topology 'mesh' needs exactly 3 nodes (a Spark has 2 ports); got 4.
            Fix: use topology 'ring' or 'switch', or list exactly 3 nodes.
          line 13: nodes[1].ports.1[0] 192.168.100.11/24 is already used by nodes[0].ports.0[0].
            Fix: every rail interface needs its own address."""
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


def test_every_shape_problem_at_once_each_on_its_line() -> None:
    assert rendered(BROKEN_SHAPE) == dedent(
        """\
        cluster.yaml: 11 problems
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
          line 10: nodes[1].name 'spark 2' is not a node name: it holds ' '.
            Fix: use letters, digits, '.', '_' and '-' only, starting with a letter or digit, e.g. spark-1.
          line 11: nodes[1].ssh must be a mapping (key: value); got '10.0.0.12'.
            Fix: write it like `ssh: {host: 10.0.0.12}`.
          line 13: nodes[1].ports.0 lists 1 of its 2 rail addresses.
            Fix: give both: `[192.168.100.11/24, 192.168.101.11/24]` (one for each rail: the port's two PCIe halves).
          line 14: nodes[1].ports.1[0] '192.168.100.300/24' is not an IPv4 address with a prefix length.
            Fix: write it like 192.168.100.11/24.
          line 14: nodes[1].ports.1[1].netdev 'enp1s0f1np1-too-long' is too long: at most 15 characters.
            Fix: use letters, digits, '.', '_' and '-' only, at most 15, not starting with '.' or '-'."""
    )


def test_a_problem_ends_each_sentence_once() -> None:
    assert Problem(("mtu",), 3, "90000 is too large.", "use 9000").render() == (
        "  line 3: mtu 90000 is too large.\n    Fix: use 9000."
    )
    assert str(ConfigError("x.yaml", [])) == "x.yaml: 1 problem\n  is not a valid cluster file."


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    latin1, fifo = tmp_path / "latin1.yaml", tmp_path / "fifo.yaml"
    latin1.write_bytes(b"topology: \xe9\n")
    os.mkfifo(fifo)
    for path, what in [
        (tmp_path / "missing.yaml", "the file does not exist.\n    Fix: check the path."),
        (tmp_path, "the path is a directory, not a file.\n    Fix: name the file."),
        (
            latin1,
            "the file is not UTF-8 text (invalid continuation byte).\n    Fix: save it as UTF-8.",
        ),
        (
            fifo,
            "the path is a FIFO (named pipe), not a regular file.\n    Fix: name a cluster.yaml file.",
        ),
        (Path("/dev/zero"), "the path is a character device, not a regular file."),
    ]:
        with pytest.raises(ConfigError) as info:
            load_cluster(path)
        assert str(info.value).startswith(f"{path}: 1 problem\n  {what}")
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * 2**20)
    with pytest.raises(ConfigError, match="the file is 1048578 bytes; a cluster file is at most"):
        load_cluster(big)
