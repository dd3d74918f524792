"""Every command the suite sends runs exactly the intended argv: the measurement phases run
against a transport that hands each command's text to the simulator's POSIX sh and records the
argv of every program it starts. Each must have one of the shapes in `shapes`, every name from
cluster.yaml one whole element; the NCCL launcher and the GPU load are what Python's shlex makes
of the operator's template. Values carry shell metacharacters wherever validation lets them."""

from __future__ import annotations

import re
import shlex
import string
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.cluster import Cluster, argrules, parse_cluster
from pytest_sparkfabric.measure import facts, links, nccl_run, rdma, reach, soak
from pytest_sparkfabric.measure.engine import REACH_COMMAND, Fabric
from pytest_sparkfabric.probes.nvidia_smi import QUERY_FIELDS
from pytest_sparkfabric.transport.base import Finished, Job, RunResult, Transport, VirtualClock
from tests.shellrun import HOME, Argv, started
from tests.sim.strategies import cluster_text

# -- a transport that only reads the commands --------------------------------------------------


class ArgvTransport(Transport):
    def __init__(self) -> None:
        self.clock = VirtualClock()
        self.sent: list[tuple[Job, list[Argv]]] = []
        self._lock = threading.Lock()

    def run(self, job: Job) -> RunResult:
        outcome, argvs = started(job.command)
        assert "Syntax error" not in outcome.stderr, (job.command, outcome.stderr)
        with self._lock:
            self.sent.append((job, argvs))
        return RunResult(job.node, job.command, outcome.rc, outcome.stdout, "", 0.01)

    def start(self, job: Job) -> Finished:
        # A server runs until stopped: the flows poll for it as they would.
        return Finished(job, self.run(job), polls_running=None)


def every_command(cluster: Cluster) -> list[tuple[Job, list[Argv]]]:
    """Run every measurement phase of the suite; what each job's text starts."""
    t = ArgvTransport()
    fabric = Fabric(cluster, t)
    for node in cluster.nodes:
        facts.node(fabric, node.name)
        nccl_run.effective(fabric, node.name)
        for port in node.ports:
            links.module(fabric, node, port)
    for rail in cluster.rails:
        links.ethtool(fabric, rail)
        links.fec(fabric, rail)
    for link in fabric.plan.directed:
        reach.ping(fabric, link)
        reach.small_ping(fabric, link)
    rdma.pair_runs(fabric)
    rdma.tcp_runs(fabric)
    soak.run(fabric)
    nccl_run.run(fabric)
    return t.sent


# -- what each tool is meant to get --------------------------------------------------------------

NUM = re.compile(r"\d+")
Element = str | frozenset[str] | re.Pattern[str]


def _alternatives(names: Iterable[str]) -> str:
    return "(?:" + "|".join(re.escape(n) for n in sorted(names)) + ")"


def shapes(cluster: Cluster) -> list[tuple[Element, ...]]:
    rails = cluster.rails
    nd = frozenset(r.netdev for r in rails)
    rd = frozenset(r.rdma for r in rails)
    addr = frozenset(str(r.address.ip) for r in rails)
    nds, rds = _alternatives(nd), _alternatives(rd)
    sysfs = re.compile(
        "|".join(
            [
                rf"/proc/sys/net/ipv4/conf/(?:all|{nds})/(?:arp_ignore|arp_announce|rp_filter)",
                rf"/proc/sys/net/ipv6/conf/{nds}/disable_ipv6",
                rf"/sys/class/infiniband/{rds}/ports/1/"
                r"(?:state|phys_state|gids/\d+|gid_attrs/(?:types|ndevs)/\d+)",
                rf"/sys/class/infiniband/{rds}/ports/1/hw_counters/(?:\*|[a-z_]+)",
                r"/sys/bus/pci/devices/[0-9a-f:.]+/(?:current|max)_link_(?:speed|width)",
                rf"/sys/class/net/{nds}/device/hwmon/hwmon\*/temp\*(?:_input)?",
            ]
        )
    )
    bw = ("-F", "--report_gbits", "-q", NUM, "-D", NUM, "-p", NUM)
    out: list[tuple[Element, ...]] = [
        ("ip", "-j", "addr", "show"),
        ("ethtool", nd),
        ("ethtool", "--show-fec", nd),
        ("ethtool", "-S", nd),
        ("ethtool", "-m", nd),
        ("mlnx_qos", "-i", nd),
        ("dcb", "pfc", "show", "dev", nd),
        ("ping", "-M", "do", "-s", NUM, "-I", nd, "-c", NUM, "-W", NUM, "-w", NUM, addr),
        ("ib_write_bw", "-d", rd, *bw),
        ("ib_write_bw", "-d", rd, *bw, addr),
        ("iperf3", "-s", "-p", NUM, "-1", "-B", addr),
        ("iperf3", "-c", addr, "-P", NUM, "-t", NUM, "-p", NUM, "-J", "-B", addr),
        ("ss", "-Hltn", re.compile(r"sport = :\d+")),
        ("nvidia-smi", "--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"),
        ("cat", "--", sysfs),
        ("cat", f"{HOME}/.nccl.conf"),
        ("cat", "/etc/nccl.conf"),
        ("ldconfig", "-p"),
        ("grep", "-F", "libnccl.so.2"),
        tuple(launch_argv(cluster)),
        tuple(gpu_load_argv(cluster)),
    ]
    conf_file = cluster.spec.nccl.env.get("NCCL_CONF_FILE")
    if conf_file:
        out.append(("cat", "--", conf_file))
    return out


def _fits(argv: Argv, shape: Sequence[Element]) -> bool:
    def fits(arg: str, want: Element) -> bool:
        if isinstance(want, re.Pattern):
            return want.fullmatch(arg) is not None
        return arg == want if isinstance(want, str) else arg in want

    return len(argv) == len(shape) and all(map(fits, argv, shape))


def template_argv(template: str, values: Mapping[str, str | list[str]]) -> list[str]:
    """What POSIX sh word splitting (Python's shlex) makes of a template whose placeholders
    stand for `values`: a list stands for that many words, a text for part of one word."""
    marks = {name: f"\0{i}\0" for i, name in enumerate(values)}
    text = "".join(
        literal + (marks[name] if name is not None else "")
        for literal, name, _, _ in string.Formatter().parse(template)
    )
    out: list[str] = []
    for word in shlex.split(text):
        many = [n for n, v in values.items() if isinstance(v, list) and word == marks[n]]
        if many:
            words = values[many[0]]
            assert isinstance(words, list)
            out += words
            continue
        for name, value in values.items():
            if isinstance(value, str):
                word = word.replace(marks[name], value)
        out.append(word)
    return out


def launch_argv(cluster: Cluster) -> list[str]:
    spec = cluster.spec.nccl
    env = {**spec.env, "NCCL_DEBUG": "INFO"}
    flags = [
        w for k, v in env.items() for w in template_argv(spec.env_flag, {"key": k, "value": v})
    ]
    if cluster.topology in ("direct", "switch"):
        hosts = [str(n.rails_of(n.ports[0])[0].address.ip) for n in cluster.nodes]
    else:
        hosts = [n.ssh.host if n.ssh else n.name for n in cluster.nodes]
    binary = spec.binary
    binary = HOME + binary[1:] if binary.startswith("~/") else binary
    return template_argv(
        spec.launcher.replace("$HOME", HOME),  # the launch node's shell expands the template's
        {
            "ranks": str(len(cluster.nodes)),
            "hosts": ",".join(f"{h}:1" for h in hosts),
            "env_flags": flags,
            "binary": [binary],
            "size": spec.size,
            "mgmt_netdev": spec.mgmt_netdev,
        },
    )


def gpu_load_argv(cluster: Cluster) -> list[str]:
    secs = max(1, int(-(-cluster.spec.soak.duration_s // 1)))
    return template_argv(cluster.spec.soak.gpu_load, {"duration_s": str(secs)})


def assert_intended(cluster: Cluster) -> None:
    sent = every_command(cluster)
    allowed = shapes(cluster)
    for job, argvs in sent:
        if job.command == REACH_COMMAND:
            # A builtin only: the reach probe proves the shell answers.
            assert argvs == []
            continue
        assert argvs, f"{job.command!r} started nothing"
        for argv in argvs:
            assert any(_fits(argv, s) for s in allowed), (
                f"{job.node}: {job.command!r} ran {argv!r}, which is not an intended command"
            )
    seen = {argv for _, argvs in sent for argv in argvs}
    # Not vacuous: the commands that carry cluster.yaml's values were all among them.
    assert tuple(launch_argv(cluster)) in seen
    assert tuple(gpu_load_argv(cluster)) in seen
    conf_file = cluster.spec.nccl.env.get("NCCL_CONF_FILE")
    assert not conf_file or ("cat", "--", conf_file) in seen
    for rail in cluster.rails:
        assert ("ethtool", "-S", rail.netdev) in seen
        assert any(a[:3] == ("ib_write_bw", "-d", rail.rdma) for a in seen)
    tools = {argv[0] for argv in seen}
    assert {"ip", "ethtool", "ping", "ib_write_bw", "iperf3", "ss", "nvidia-smi", "cat"} <= tools


# -- generated clusters --------------------------------------------------------------------------

# Every character a shell treats specially, and some that are merely unusual.
METACHARACTERS = " \t\n;&|<>()$`\\\"'*?[]#~=%!{},:^@+-./"
env_values = st.text(
    alphabet=st.one_of(
        st.sampled_from(METACHARACTERS),
        st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="\0"),
    ),
    max_size=24,
)


def _names(rule: argrules.NameRule, max_size: int) -> st.SearchStrategy[str]:
    pattern = rule.pattern.replace(f"{{0,{rule.max_length - 1}}}", f"{{0,{max_size}}}")
    return st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True)


hosts = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str),
    st.tuples(st.ip_addresses(v=6), _names(argrules.NETDEV, 6)).map(lambda t: f"{t[0]}%{t[1]}"),
    _names(argrules.NETDEV, 20),
)
env_keys = st.from_regex(re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,12}", re.ASCII), fullmatch=True)
LAUNCHERS = (
    "mpirun --allow-run-as-root -np {ranks} -H {hosts} {env_flags} "
    "{binary} -b {size} -e {size} -f 2 -g 1",
    "mpirun -np {ranks} -H {hosts} -x PATH --mca oob_tcp_if_include {mgmt_netdev} "
    "{env_flags} {binary} -b {size}",
    "mpirun -np {ranks} --host {hosts} --map-by 'ppr:1:node' {env_flags} {binary} -b {size}",
    'env OMPI_MCA_plm_rsh_args="-o BatchMode=yes" mpirun -H {hosts} -n {ranks} '
    "{env_flags} {binary} -g 1 -b {size} -e {size}",
)
ENV_FLAGS = ("-x {key}={value}", "--env {key}={value}", "-x {key}={value} --mca x 'y z'")


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    topology = draw(st.sampled_from(["direct", "ring"]))
    n = 2 if topology == "direct" else 4
    per_node = 2 if topology == "direct" else 4
    netdevs = draw(st.lists(_names(argrules.NETDEV, 14), min_size=n * per_node, unique=True))
    rdmas = draw(st.lists(_names(argrules.RDMA, 20), min_size=n * per_node, unique=True))
    ssh_hosts = draw(st.lists(hosts, min_size=n, max_size=n, unique=True))
    env = draw(st.dictionaries(env_keys, env_values, max_size=4))
    if draw(st.booleans()):
        env["NCCL_CONF_FILE"] = draw(env_values.filter(bool))
    binary = draw(
        st.from_regex(re.compile(r"(?:~/)?[A-Za-z0-9_./+][A-Za-z0-9_./+-]{0,12}"), fullmatch=True)
    )
    nodes = []
    for i in range(n):
        out, back = 2 * i, 2 * ((i - 1) % n)
        subnets = (
            [(1, 100), (1, 101)]
            if topology == "direct"
            else [(0, 100 + out), (0, 101 + out), (1, 100 + back), (1, 101 + back)]
        )
        ports: dict[int, list[dict[str, str]]] = {}
        for k, (port, net) in enumerate(subnets):
            rail = {"address": f"192.168.{net}.{11 + i}/24"}
            rail |= {"netdev": netdevs[i * per_node + k], "rdma": rdmas[i * per_node + k]}
            ports.setdefault(port, []).append(rail)
        nodes.append({"name": f"spark-{i + 1}", "ssh": {"host": ssh_hosts[i]}, "ports": ports})
    data: dict[str, Any] = {
        "topology": topology,
        "transport": "sim",
        "nodes": nodes,
        "nccl": {
            "env": env,
            "binary": binary,
            "size": draw(st.from_regex(r"[1-9][0-9]{0,3}[KMG]?", fullmatch=True)),
            "launcher": draw(st.sampled_from(LAUNCHERS)),
            "env_flag": draw(st.sampled_from(ENV_FLAGS)),
        },
        "soak": {"duration_s": 20, "interval_s": 10},
        "bandwidth": {"duration_s": 2},
    }
    return parse_cluster(yaml.safe_dump(data, sort_keys=False), source="generated")


def _ring(nccl: str) -> Cluster:
    """A four-box ring (tests/sim/strategies.py) with this `nccl:` section."""
    return parse_cluster(cluster_text("ring", 4, seed=7, mtu=9000, port=0) + "nccl:\n" + nccl)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
# The reported injections (their refusal messages: tests/cluster/messages.txt): an env value and
# a conf file reach their programs as one literal argument each; a home-relative binary still
# expands on the launch node.
@example(_ring("  env: {NCCL_IB_HCA: 'a b;c$(d)', NCCL_CONF_FILE: '-n x;$(id)'}\n"))
@example(_ring("  binary: ~/nccl-tests/build/all_reduce_perf\n"))
def test_every_command_runs_exactly_the_intended_argv(cluster: Cluster) -> None:
    assert_intended(cluster)
