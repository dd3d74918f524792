"""Hostile cluster files: every field that reaches a command line, rejected with its line.

`sparkfabric check` and `pytest --cluster` both refuse such a file before anything runs: a
usage error (exit 4), one line per problem with its fix, no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.cluster import ConfigError, parse_cluster
from pytest_sparkfabric.cluster.source import format_path
from tests.cluster.samples import SWITCH

# Metacharacters, spaces and leading dashes in each field that ends up in a command.
HOSTILE = r"""topology: switch
nodes:
  - name: spark-1
    ssh: {host: "-oProxyCommand=touch${IFS}f", user: "-lroot"}
    ports:
      1: [{address: 192.168.100.11/24, netdev: "x;id>f", rdma: "r`id`"}, 192.168.101.11/24]
  - name: spark-2
    ssh: {host: "h2 $(id)", user: "nv;id"}
    ports:
      1: [192.168.100.12/24, {address: 192.168.101.12/24, netdev: "-n", rdma: "-d"}]
  - name: spark-3
    ssh: {host: "10.0.0.13", user: nvidia}
    ports:
      1: [192.168.100.13/24, 192.168.101.13/24]
switch:
  host: "10.0.0.2/x#"
  user: "ro:pw"
  ports: {spark-1: "qsfp56-dd-1-1,ether1", spark-2: qsfp56-dd-1-5, spark-3: "-x"}
transport: ssh
nccl:
  env: {"A;cmd;B": "1", "NCCL_IB_HCA": "ok\0"}
  binary: "all_reduce_perf;id"
  launcher: "mpirun -np {ranks} -H \"{hosts}\" {env_flags} {binary} -b {size}"
  env_flag: "-x '{key}={value}'"
soak:
  gpu_load: "gpu_burn {duration_s} # {duration_s!r}"
"""

EXPECTED = r"""
cluster.yaml: 18 problems
  line 4: nodes[0].ssh.host '-oProxyCommand=touch${IFS}f' is not a host name, an IP address or an ssh_config alias: it starts with '-', which ssh would read as an option.
    Fix: write the address (10.0.0.11, fe80::1%eth0), the host name or a Host alias of your ssh_config: letters, digits, '.', '_' and '-', not starting with '-'.
  line 4: nodes[0].ssh.user '-lroot' is not a login user name: it starts with '-'.
    Fix: use letters, digits, '.', '_', '@' and '-' only, not starting with '-', e.g. nvidia.
  line 6: nodes[0].ports.1[0].netdev 'x;id>f' is not a Linux interface name: it holds ';', '>'.
    Fix: use letters, digits, '.', '_' and '-' only, at most 15, not starting with '.' or '-', e.g. enp1s0f1np1.
  line 6: nodes[0].ports.1[0].rdma 'r`id`' is not an RDMA device name: it holds '`'.
    Fix: use letters, digits, '.', '_' and '-' only, not starting with '.' or '-', e.g. rocep1s0f1.
  line 8: nodes[1].ssh.host 'h2 $(id)' is not a host name, an IP address or an ssh_config alias: it holds ' ', '$', '(', ')'.
    Fix: write the address (10.0.0.11, fe80::1%eth0), the host name or a Host alias of your ssh_config: letters, digits, '.', '_' and '-', not starting with '-'.
  line 8: nodes[1].ssh.user 'nv;id' is not a login user name: it holds ';'.
    Fix: use letters, digits, '.', '_', '@' and '-' only, not starting with '-', e.g. nvidia.
  line 10: nodes[1].ports.1[1].netdev '-n' is not a Linux interface name: it starts with '-'.
    Fix: use letters, digits, '.', '_' and '-' only, at most 15, not starting with '.' or '-', e.g. enp1s0f1np1.
  line 10: nodes[1].ports.1[1].rdma '-d' is not an RDMA device name: it starts with '-'.
    Fix: use letters, digits, '.', '_' and '-' only, not starting with '.' or '-', e.g. rocep1s0f1.
  line 16: switch.host '10.0.0.2/x#' is not a host name or an IP address: it holds '#', '/'.
    Fix: write the switch's address (10.0.0.2, fe80::2%eth0) or its host name: letters, digits, '.', '_' and '-', not starting with '-'.
  line 17: switch.user 'ro:pw' is not a login user name: it holds ':'.
    Fix: use letters, digits, '.', '_', '@' and '-' only, not starting with '-', e.g. nvidia.
  line 18: switch.ports.spark-1 'qsfp56-dd-1-1,ether1' is not a switch interface name: it holds ','.
    Fix: use the interface's name as RouterOS lists it: letters, digits, '.', '_' and '-', e.g. qsfp56-dd-1-1.
  line 18: switch.ports.spark-3 '-x' is not a switch interface name: it starts with '-'.
    Fix: use the interface's name as RouterOS lists it: letters, digits, '.', '_' and '-', e.g. qsfp56-dd-1-1.
  line 21: nccl.env.A;cmd;B is not an environment variable name: it holds ';'.
    Fix: a name holds letters, digits and '_' only and does not start with a digit, e.g. NCCL_IB_HCA.
  line 21: nccl.env.NCCL_IB_HCA 'ok\x00' holds a NUL character.
    Fix: remove it: no environment variable can carry it.
  line 22: nccl.binary 'all_reduce_perf;id' is not a program path the suite passes on: it holds ';'.
    Fix: write a path of letters, digits, '.', '_', '+', '/' and '-', optionally starting with ~/, never with '-', e.g. all_reduce_perf.
  line 23: nccl.launcher puts {hosts} inside double quotes.
    Fix: write them outside quotes and comments: the suite fills each in as quoted shell words.
  line 24: nccl.env_flag puts {key} and {value} inside single quotes.
    Fix: write them outside quotes and comments: the suite fills each in as quoted shell words.
  line 26: soak.gpu_load uses {duration_s} with a format, index or attribute.
    Fix: write each as {name}: it is filled in whole.
"""  # noqa: E501


def test_every_hostile_field_is_one_problem_with_its_line_and_fix() -> None:
    with pytest.raises(ConfigError) as info:
        parse_cluster(HOSTILE)
    assert str(info.value) == EXPECTED.strip("\n")


def test_sparkfabric_check_refuses_it_as_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(HOSTILE)
    assert main(["check", str(path)]) == 4
    out = capsys.readouterr()
    assert out.out == EXPECTED.lstrip("\n").replace("cluster.yaml:", f"{path}:", 1)
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


def test_a_template_placeholder_inside_quotes_is_refused_with_every_spot() -> None:
    text = SWITCH.replace(
        "nccl: {",
        "nccl: {launcher: \"x {ranks} '{hosts}' \\\\{binary} # {env_flags}\", ",
    )
    with pytest.raises(ConfigError) as info:
        parse_cluster(text)
    assert str(info.value).splitlines()[1:] == [
        "  line 23: nccl.launcher puts {hosts} inside single quotes; {binary} after a backslash; "
        "{env_flags} in a comment.",
        "    Fix: write them outside quotes and comments: the suite fills each in as quoted "
        "shell words.",
    ]
