"""What a user reads for a broken cluster.yaml, as rendered text: every message once.

Each case is a file (a sample with one change, or a short file of its own); messages.txt holds
every problem line `sparkfabric check` and `pytest --cluster` print for it, fix included.
Hostile values (files/hostile.yaml: metacharacters, spaces, leading dashes in each field that
ends up in a command) are refused before anything runs: a usage error (exit 4), one line per problem, no traceback.
"""

# ruff: noqa: E501

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.cluster import ConfigError, Problem, load_cluster, parse_cluster
from pytest_sparkfabric.cluster.source import format_path
from tests.cluster.samples import DIRECT, FILES, MESH, RING, SIM, SWITCH

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


# fmt: off
CASES: dict[str, str] = {
    "empty": "",
    "comment": "# only a comment\n",
    "list": "- spark-1\n- spark-2\n",
    "syntax": "topology: ring\nnodes: [\n",
    "recursive": "a: &a [*a]\n",
    "alias-bomb": "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9)),
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
    "unique-names-hosts": edit(RING, ("name: spark-3", "name: spark-1"), ("host: 10.0.0.14", "host: 10.0.0.12")),
    "usable-address": edit(DIRECT, ("192.168.100.12/24", "192.168.100.12/32")),
    "same-port": edit(DIRECT, ("      1: [192.168.100.12/24", "      0: [192.168.100.12/24")),
    "one-cabled-port": edit(DIRECT, ("1: [192.168.100.11/24, 192.168.101.11/24]", "0: [192.168.102.11/24, 192.168.103.11/24]\n      1: [192.168.100.11/24, 192.168.101.11/24]")),
    "both-ports": edit(RING, ("      0: [192.168.104.13/24, 192.168.105.13/24]\n", "")),
    "cable-subnet": edit(MESH, ("1: [192.168.100.12/24", "1: [192.168.110.12/24")),
    "cable-order": ring_order(0, 2, 1, 3),
    "cable-subnet-reused": edit(RING, ("0: [192.168.104.13/24", "0: [192.168.100.13/24"), ("1: [192.168.104.14/24", "1: [192.168.100.14/24")),
    "rail-subnet": edit(SWITCH, ("192.168.101.12/24", "192.168.111.12/24")),
    "arp-flux": edit(DIRECT, ("192.168.101.11/24", "192.168.100.21/24"), ("192.168.101.12/24", "192.168.100.22/24")),
    "arp-sysctls-keeps-cables-apart": edit(RING, ("mtu: 9000", "arp_sysctls: true"), ("1: [192.168.106.11/24", "1: [192.168.100.21/24"), ("0: [192.168.106.14/24", "0: [192.168.100.24/24")),
    "ssh-needed": edit(DIRECT, ("    ssh: {host: 10.0.0.12, user: nvidia}\n", "")),
    "replay-needs-dir": edit(DIRECT, ("topology: direct", "topology: direct\ntransport: replay")),
    "switch-needed": edit(SWITCH, (SWITCH[SWITCH.index("switch:") : SWITCH.index("transport:")], "")),
    "switch-only-for-switch": DIRECT + "switch: {host: s, user: u}\n",
    "plain-http": edit(SWITCH, ("  user: sparkfabric\n", "  user: sparkfabric\n  api_port: 80\n")),
    "switch-ports": edit(SWITCH, ("spark-3: qsfp56-dd-2-1", "spark-33: qsfp56-dd-1-5")),
    "switch-leg-speed": edit(SWITCH, ("  ports: {spark-1", "  link_speed: {qsfp56-dd-1-2: 100G}\n  ports: {spark-1")),
    "port-speed": edit(DIRECT, ("  - name: spark-2\n", "  - name: spark-2\n    link_speed: {0: 100G}\n")),
    "launch-node": edit(SWITCH, ("launch_node: spark-2", "launch_node: spark-9")),
    "fault-needs": fault("{fault: link_down}"),
    "fault-node": fault("{fault: link_down, node: spark-9}"),
    "fault-target": fault("{fault: nic_throttled, node: spark-1, lane: 2}"),
    "fault-switch": fault("{fault: autoneg_failed, switch_port: x}"),
    "fault-port": fault("{fault: link_down, node: spark-1, port: 0}"),
    "fault-mtu": fault("{fault: mtu, value: 1500}"),
    "rules-beside-a-broken-shape": edit(RING, ("mtu: 9000", "mtu: jumbo"), ("name: spark-4", "name: spark-1"), ("transport: ssh", "transport: ssh\nthresholds: {rail_rdma_gbsp: 90}")),
    "design-example": edit(RING, ("topology: ring ", "topology: mesh "), ("1: [192.168.100.12/24", "1: [192.168.100.11/24")),
    "broken-shape": FILES["broken-shape"],
    "hostile": FILES["hostile"],
    "template-quotes": edit(SWITCH, ("nccl: {", "nccl: {launcher: \"x {ranks} '{hosts}' \\\\{binary} # {env_flags}\", ")),
}
# fmt: on
_, *_parts = re.split(
    r"^\[([\w-]+)\]\n",
    (Path(__file__).parent / "messages.txt").read_text(encoding="utf-8"),
    flags=re.M,
)
TOLD = dict(zip(_parts[::2], (text.rstrip("\n") for text in _parts[1::2]), strict=True))


def rendered(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_cluster(text)
    return str(info.value)


def test_every_case_has_its_text() -> None:
    assert list(TOLD) == list(CASES)


@pytest.mark.parametrize("case", CASES)
def test_message(case: str) -> None:
    head, _, body = rendered(CASES[case]).partition("\n")
    n = sum(not line.startswith("    ") for line in body.splitlines())
    assert head == f"cluster.yaml: {n} problem{'s' * (n > 1)}"
    assert body == TOLD[case]


def test_sparkfabric_check_refuses_a_hostile_file_as_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(FILES["hostile"])
    assert main(["check", str(path)]) == 4
    out = capsys.readouterr()
    assert out.out == f"{path}: 18 problems\n{TOLD['hostile']}\n"
    assert "Traceback" not in out.err


REFUSED = [
    "h3;touch${IFS}f;#",
    "-oProxyCommand=id",
    "a b",
    "x\nid",
    "fe80::1%eth0;id",
    "1.2.3.4:22",
]
ACCEPTED = ["10.0.0.12", "fe80::1%enp1s0f0np0", "2001:db8::12", "spark-2.lab", "spark_2"]


@pytest.mark.parametrize("value", REFUSED + ACCEPTED)
def test_which_ssh_hosts_are_refused(value: str) -> None:
    text = SWITCH.replace("host: 10.0.0.12", "host: " + json.dumps(value), 1)
    try:
        parse_cluster(text)
    except ConfigError as err:
        assert [format_path(p.path) for p in err.problems] == ["nodes[1].ssh.host"]
        assert value in REFUSED
    else:
        assert value in ACCEPTED


def test_a_problem_ends_each_sentence_once() -> None:
    assert Problem(("mtu",), 3, "90000 is too large.", "use 9000").render() == (
        "  line 3: mtu 90000 is too large.\n    Fix: use 9000."
    )
    assert str(ConfigError("x.yaml", [])) == "x.yaml: 1 problem\n  is not a valid cluster file."


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("missing.yaml", "the file does not exist.\n    Fix: check the path."),
        ("", "the path is a directory, not a file.\n    Fix: name the file."),
        ("latin1.yaml", "the file is not UTF-8 text (invalid continuation byte).\n    Fix: save it as UTF-8."),
        ("fifo.yaml", "the path is a FIFO (named pipe), not a regular file.\n    Fix: name a cluster.yaml file."),
        ("/dev/zero", "the path is a character device, not a regular file."),
        ("big.yaml", "the file is 1048578 bytes; a cluster file is at most 1048576 bytes (1 MiB)."),
    ],
)  # fmt: skip
def test_files_that_cannot_be_read(tmp_path: Path, name: str, what: str) -> None:
    (tmp_path / "latin1.yaml").write_bytes(b"topology: \xe9\n")
    (tmp_path / "big.yaml").write_text("# " + "x" * 2**20)
    os.mkfifo(tmp_path / "fifo.yaml")
    path = tmp_path / name
    with pytest.raises(ConfigError) as info:
        load_cluster(path)
    assert str(info.value).startswith(f"{path}: 1 problem\n  {what}")
