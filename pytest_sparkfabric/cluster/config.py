"""cluster.yaml -> Cluster: the typed, frozen, validated description of a fabric.

Shape validation is pydantic's; the cabling and address rules live in `topology.py`. Every problem
in a file is collected and reported at once, each with its YAML line, its path and a fix. The
`description` of every field below is also the field reference (docs/cluster-yaml.md,
`sparkfabric schema`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Interface
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from pytest_sparkfabric.cluster import argrules, hardware
from pytest_sparkfabric.cluster.small_file import NotASmallFile, read_small_text
from pytest_sparkfabric.cluster.source import (
    Hint,
    Located,
    Path_,
    Shape,
    SourceProblem,
    TooComplex,
    format_path,
    load_located,
    seen,
    validation_problems,
)
from pytest_sparkfabric.cluster.thresholds import KNOWN as KNOWN_THRESHOLDS

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import topology

TopologyName = Literal["direct", "mesh", "ring", "switch"]
TransportName = Literal["ssh", "sim", "replay"]
PortNumber = Literal[0, 1]
FaultName = Literal[
    "link_down",
    "autoneg_failed",
    "switch_cpu_forwarding",
    "pfc_stall",
    "duplicate_ip",
    "half_port",
    "nccl_single_hca",
    "nccl_socket",
    "ipv6_enabled",
    "mtu",
    "nic_throttled",
    "lane_degradation",
    "arp_flux",
    "rp_filter_strict",
    "pcie_width",
    "eeprom_placeholder",
    "node_unreachable",
    "command_hangs",
]
FAULTS: tuple[str, ...] = get_args(FaultName)
TOPOLOGIES: tuple[str, ...] = get_args(TopologyName)
TRANSPORTS: tuple[str, ...] = get_args(TransportName)

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=False, allow_inf_nan=False)


def _key_rule(value: Any) -> Any:
    return argrules.ENV_KEY.check(value, key=True)


def _pattern(rule: argrules.NameRule) -> Any:
    # The rule as the schema (and so the reference) shows it; the check's words come first.
    return Field(min_length=1, max_length=rule.max_length, pattern=rule.pattern)


SshHost = Annotated[str, Field(min_length=1), BeforeValidator(argrules.check_ssh_host)]
SwitchHost = Annotated[str, Field(min_length=1), BeforeValidator(argrules.check_switch_host)]
UserName = Annotated[str, _pattern(argrules.USER), BeforeValidator(argrules.USER.check)]
NetdevName = Annotated[str, _pattern(argrules.NETDEV), BeforeValidator(argrules.NETDEV.check)]
RdmaName = Annotated[str, _pattern(argrules.RDMA), BeforeValidator(argrules.RDMA.check)]
SwitchPortName = Annotated[
    str, _pattern(argrules.SWITCH_PORT), BeforeValidator(argrules.SWITCH_PORT.check)
]
EnvKey = Annotated[
    str, Field(min_length=1, pattern=argrules.ENV_KEY.pattern), BeforeValidator(_key_rule)
]
EnvValue = Annotated[str, BeforeValidator(argrules.check_env_value)]


class SshSpec(_Model):
    """How to reach a node's shell. ~/.ssh/config (or `ssh_config:`) applies, ProxyJump too."""

    host: SshHost = Field(
        description="Management address or ~/.ssh/config alias of the node (normally its 10GbE "
        "port, not a fabric address): an IPv4 or IPv6 address, a host name or a Host alias "
        "(letters, digits, '.', '_', '-'; never starting with '-').",
        examples=["10.0.0.11"],
    )
    user: UserName | None = Field(
        default=None,
        description="Login user (letters, digits, '.', '_', '@', '-'; never starting with '-'); "
        "default: ~/.ssh/config, else the local user.",
        examples=["nvidia"],
    )
    port: int | None = Field(
        default=None, ge=1, le=65535, description="SSH port; default: ~/.ssh/config, else 22."
    )
    identity_file: str | None = Field(
        default=None,
        min_length=1,
        description="Private key file to log in with; default: ~/.ssh/config and the ssh agent.",
        examples=["~/.ssh/id_ed25519"],
    )


def _address_text(value: Any) -> Any:
    if isinstance(value, str) and "/" not in value:
        raise PydanticCustomError(
            "address_prefix",
            "{seen} has no prefix length",
            {"seen": seen(value), "fix": f"write it with its subnet, e.g. {value.strip()}/24"},
        )
    if not isinstance(value, str | IPv4Interface):
        raise PydanticCustomError(
            "address_type",
            "must be an IPv4 address with a prefix length; got {seen}",
            {"seen": seen(value), "fix": "write it like 192.168.100.11/24"},
        )
    return value


class RailSpec(_Model):
    """One fabric interface: a PCIe half of a QSFP port, with its own address. Written either as
    its address alone (`192.168.100.11/24`) or as this mapping."""

    address: Annotated[IPv4Interface, BeforeValidator(_address_text)] = Field(
        description="IPv4 address with prefix length, e.g. 192.168.100.11/24. Every rail "
        "interface needs its own address; the subnet plan follows the topology.",
        examples=["192.168.100.11/24"],
    )
    netdev: NetdevName | None = Field(
        default=None,
        description="Linux interface name (at most 15 letters, digits, '.', '_', '-'; not "
        "starting with '.' or '-'); default: the Spark's standard name for this port and rail "
        "(port 1: enp1s0f1np1, enP2p1s0f1np1).",
        examples=["enp1s0f1np1"],
    )
    rdma: RdmaName | None = Field(
        default=None,
        description="RoCE device name (letters, digits, '.', '_', '-'; not starting with '.' or "
        "'-'); default: the Spark's standard name for this port and rail (port 1: rocep1s0f1, "
        "roceP2p1s0f1).",
        examples=["rocep1s0f1"],
    )


def _rail_entry(value: Any) -> Any:
    if isinstance(value, str):
        return {"address": value}
    if not isinstance(value, Mapping | RailSpec):
        raise PydanticCustomError(
            "rail_type",
            "must be an address like 192.168.100.11/24 or a mapping "
            "{address: ..., netdev: ..., rdma: ...}; got {seen}",
            {"seen": seen(value), "fix": "write it like 192.168.100.11/24"},
        )
    return value


RailEntry = Annotated[RailSpec, BeforeValidator(_rail_entry, json_schema_input_type=str | RailSpec)]


class NodeSpec(_Model):
    """One Spark (or GX10): its name, how to reach it, and its cabled QSFP ports."""

    name: str = Field(
        min_length=1,
        max_length=63,
        pattern=NAME_PATTERN,
        description="Name used in test ids and reports; unique in the file.",
        examples=["spark-1"],
    )
    ssh: SshSpec | None = Field(
        default=None,
        description="How to log in (needed with transport ssh).",
        examples=[{"host": "10.0.0.11", "user": "nvidia"}],
    )
    ports: dict[PortNumber, tuple[RailEntry, RailEntry]] = Field(
        description="Cabled QSFP port (0: the cage nearest the RJ45 port, or 1) -> "
        "[rail 0, rail 1]: the port's two PCIe halves, each its own interface with its own "
        "address. Direct and switch: the one cabled port; ring and mesh: both.",
        examples=[{1: ["192.168.100.11/24", "192.168.101.11/24"]}],
        json_schema_extra={"propertyNames": {"enum": ["0", "1"]}},
    )

    @field_validator("ports", mode="before")
    @classmethod
    def _port_numbers(cls, value: Any) -> Any:
        # `"1":` (a quoted key) means port 1 too.
        if not isinstance(value, Mapping):
            return value
        return {(int(k) if k in ("0", "1") else k): v for k, v in value.items()}


class SwitchSpec(_Model):
    """The switch of a `switch` topology, read (never changed) to check ports, offload and PFC."""

    vendor: Literal["routeros"] = Field(
        default="routeros", description="Switch operating system: MikroTik RouterOS 7."
    )
    host: SwitchHost = Field(
        description="Management address (IPv4 or IPv6) or host name of the switch.",
        examples=["10.0.0.2"],
    )
    user: UserName = Field(
        description="A read-only user (a group with the read, api and rest-api policies); "
        "letters, digits, '.', '_', '@', '-', never starting with '-'.",
        examples=["sparkfabric"],
    )
    password_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable that holds the password; the password itself is "
        "never in the file.",
        examples=["SWITCH_PASSWORD"],
    )
    api: Literal["rest", "ssh"] = Field(
        default="rest", description="How to read the switch: its REST API or its SSH CLI."
    )
    api_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Port of the API; default: 443 for rest, 22 for ssh.",
    )
    verify_tls: bool = Field(
        default=True,
        description="Verify the switch's HTTPS certificate (rest). Off, whoever answers at "
        "the address gets the password: prefer ca_file.",
    )
    ca_file: str | None = Field(
        default=None,
        min_length=1,
        description="PEM file of the certificate authority that signed the switch's HTTPS "
        "certificate (e.g. its self-signed certificate, exported), relative to this file; "
        "default: the system's store (or $SSL_CERT_FILE). The certificate must name host.",
        examples=["switch-ca.pem"],
    )
    allow_http: bool = Field(
        default=False,
        description="Allow plain HTTP (api_port 80, RouterOS's www service): the user and "
        "password then cross the network unencrypted; the report warns.",
    )
    ports: dict[str, SwitchPortName] = Field(
        default_factory=dict,
        description="Node name -> the switch interface its cable lands on (a breakout leg, "
        "e.g. qsfp56-dd-1-1 and qsfp56-dd-1-5; letters, digits, '.', '_', '-'). One entry per "
        "node.",
        examples=[{"spark-1": "qsfp56-dd-1-1", "spark-2": "qsfp56-dd-1-5"}],
    )


_LAUNCHER_KEYS = ("ranks", "hosts", "env_flags", "binary", "size")
# The placeholders that carry text; the others are digits (and K, M, G) wherever they stand.
_LAUNCHER_TEXT = ("hosts", "env_flags", "binary")


class NcclSpec(_Model):
    """How the NCCL test (nccl-tests) is launched across the nodes."""

    launcher: str = Field(
        default=(
            "mpirun --allow-run-as-root -np {ranks} -H {hosts} {env_flags} "
            "{binary} -b {size} -e {size} -f 2 -g 1"
        ),
        description="Command template run on the launch node (shell text); placeholders: "
        "{ranks}, {hosts} (ip1:1,ip2:1,...), {env_flags}, {binary}, {size}. Each is filled in "
        "as quoted shell words, so {hosts}, {env_flags} and {binary} must stand outside quotes.",
    )
    env_flag: str = Field(
        default="-x {key}={value}",
        description="How one environment variable is passed to the launcher; placeholders "
        "{key} and {value}, each filled in as a quoted shell word (so outside quotes).",
    )
    binary: Annotated[str, BeforeValidator(argrules.check_binary)] = Field(
        default="all_reduce_perf",
        min_length=1,
        pattern=argrules.BINARY_PATTERN,
        description="The nccl-tests binary to run: a name or path (letters, digits, '.', '_', "
        "'+', '/', '-'; ~/ at the start means the login user's home; never starting with '-').",
    )
    size: str = Field(
        default="16G",
        pattern=r"^[0-9]+[KMG]?$",
        description="Message size for -b/-e: a whole number of bytes with an optional K, M or G.",
        examples=["16G"],
    )
    launch_node: str | None = Field(
        default=None, description="Node that runs the launcher; default: the first node."
    )
    timeout_s: float = Field(default=900, gt=0, description="Seconds before the run is stopped.")
    env: dict[EnvKey, EnvValue] = Field(
        default_factory=dict,
        description="Job environment for the ranks, passed by the launcher (e.g. NCCL_IB_HCA, "
        "NCCL_SOCKET_IFNAME); it takes precedence over the nodes' nccl.conf files. "
        "NCCL_DEBUG=INFO is always added so the transport can be checked. Keys are variable "
        "names (letters, digits, '_'; not starting with a digit); values are any text, passed "
        "quoted.",
        examples=[{"NCCL_DEBUG": "INFO"}],
    )

    @field_validator("launcher", mode="before")
    @classmethod
    def _launcher(cls, value: Any) -> Any:
        return argrules.check_template(value, _LAUNCHER_KEYS, _LAUNCHER_TEXT)

    @field_validator("env_flag", mode="before")
    @classmethod
    def _env_flag(cls, value: Any) -> Any:
        return argrules.check_template(value, ("key", "value"), ("key", "value"))


class SoakSpec(_Model):
    """The heat soak: links saturated and GPUs burning while per-lane error rates are sampled."""

    duration_s: float = Field(default=600, gt=0, description="Length of the soak in seconds.")
    interval_s: float = Field(
        default=10, gt=0, description="Seconds between samples of the link counters."
    )
    gpu_load: str = Field(
        default="gpu_burn -m 80 {duration_s}",
        description="Command (shell text) that loads the GPU on every node for the soak; "
        "placeholder {duration_s} (whole seconds). Always cap memory (-m): it is shared with "
        "the OS.",
    )

    @field_validator("gpu_load", mode="before")
    @classmethod
    def _gpu_load(cls, value: Any) -> Any:
        return argrules.check_template(value, ("duration_s",), ())


class BandwidthSpec(_Model):
    """Settings of the RDMA (ib_write_bw) and TCP (iperf3) bandwidth tests."""

    qps: int = Field(default=4, ge=1, le=64, description="RDMA queue pairs per test (-q).")
    duration_s: int = Field(
        default=10, ge=1, le=600, description="Seconds each bandwidth test runs (-D / -t)."
    )
    iperf3_streams: int = Field(
        default=4, ge=1, le=128, description="Parallel TCP streams per netdev (-P)."
    )
    base_port: int = Field(
        default=18515,
        ge=1024,
        le=65000,
        description="First TCP port the test servers listen on; the suite uses a few above it.",
    )


class FaultSpec(_Model):
    """One fault the simulated cluster injects; which targets each fault takes is checked."""

    fault: FaultName = Field(description="The fault to inject.", examples=["link_down"])
    node: str | None = Field(default=None, description="The node it affects.")
    rail: Literal[0, 1] | None = Field(default=None, description="The rail it affects.")
    port: PortNumber | None = Field(default=None, description="The QSFP port it affects.")
    lane: Literal[0, 1, 2, 3] | None = Field(
        default=None, description="The cable lane it affects (lane_degradation)."
    )
    switch_port: str | None = Field(default=None, description="The switch port it affects.")
    value: int | None = Field(default=None, description="A number the fault needs (mtu: the MTU).")
    onset_c: float | None = Field(
        default=None, description="NIC temperature (C) at which the fault starts."
    )
    command: str | None = Field(default=None, description="The command that hangs (command_hangs).")


class SimulateSpec(_Model):
    """The simulated cluster (transport sim): a seed and the faults to inject."""

    seed: int = Field(default=0, description="Seed of the simulator's noise, for repeatable runs.")
    faults: tuple[FaultSpec, ...] = Field(
        default=(), description="Faults to inject; an empty list simulates a healthy cluster."
    )


class ClusterSpec(_Model):
    """cluster.yaml: the fabric of a DGX Spark cluster, as pytest-sparkfabric accepts it."""

    topology: TopologyName = Field(
        description="How the Sparks are cabled: direct (2 nodes, one cable, same port number at "
        "both ends), mesh (3 nodes, port 0 of each to port 1 of the next), ring (4 or more, "
        "port 0 to port 1 of the next, the last back to the first) or switch (2 to 8 nodes, one "
        "cable each to one switch, the same port number on every node).",
        examples=["ring"],
    )
    mtu: int = Field(
        default=9000,
        ge=576,
        le=9216,
        description="MTU every fabric netdev must carry end to end (checked with don't-fragment "
        "pings of MTU-28 bytes). NVIDIA documents 9000 for direct, 1500 for mesh.",
        examples=[9000],
    )
    nodes: tuple[NodeSpec, ...] = Field(
        description="The nodes. Ring and mesh: in cable order (port 0 of each node is cabled to "
        "port 1 of the next).",
        examples=[
            [
                {
                    "name": "spark-1",
                    "ssh": {"host": "10.0.0.11", "user": "nvidia"},
                    "ports": {1: ["192.168.100.11/24", "192.168.101.11/24"]},
                }
            ]
        ],
    )
    switch: SwitchSpec | None = Field(
        default=None, description="The switch; required with topology switch, not allowed else."
    )
    transport: TransportName = Field(
        default="ssh",
        description="How the suite reaches the nodes: ssh (the real cluster), sim (a simulated "
        "cluster, see simulate) or replay (a recording, see replay_dir).",
    )
    ssh_config: str | None = Field(
        default=None, description="An ssh_config file to use instead of ~/.ssh/config."
    )
    output_cap_mib: int = Field(
        default=16,
        ge=1,
        le=1024,
        description="Most output kept per command and stream (stdout, stderr), in MiB, in memory "
        "and in recordings: beyond it the middle is dropped and a marker says how much.",
    )
    arp_sysctls: bool = Field(
        default=False,
        description="true when fabric interfaces of one node share a subnet on purpose and every "
        "node sets arp_ignore=1, arp_announce=2 and rp_filter 0 or 2 (otherwise two "
        "interfaces of one node in one subnet is an error: ARP flux).",
    )
    thresholds: dict[str, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict,
        description="Pass/fail limits that replace the defaults, by name: "
        + ", ".join(sorted(KNOWN_THRESHOLDS))
        + ". A failure shows the limit and where it came from.",
        examples=[{"rail_rdma_gbps": 90}],
        json_schema_extra={"propertyNames": {"enum": [k for k in sorted(KNOWN_THRESHOLDS)]}},
    )
    nccl: NcclSpec = Field(default_factory=NcclSpec, description="The NCCL test.")
    soak: SoakSpec = Field(default_factory=SoakSpec, description="The heat soak.")
    bandwidth: BandwidthSpec = Field(
        default_factory=BandwidthSpec, description="The bandwidth tests."
    )
    simulate: SimulateSpec | None = Field(
        default=None, description="The simulated cluster (transport sim)."
    )
    replay_dir: str | None = Field(
        default=None,
        min_length=1,
        description="Folder of a recorded run to replay (transport replay).",
    )


# Words for messages where the schema alone says too little (see yamlsrc.validation_problems).
HINTS: dict[Shape, Hint] = {
    ("topology",): Hint(note="direct: 2 nodes, mesh: 3, ring: 4 or more, switch: 2 to 8"),
    ("mtu",): Hint(note="9000 for jumbo frames, 1500 is Ethernet's default"),
    ("nodes",): Hint(example="[{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}, ...]"),
    ("nodes", "*"): Hint(example="{name: spark-1, ssh: {host: 10.0.0.11}, ports: {...}}"),
    ("nodes", "*", "name"): Hint(
        rule="a name starts with a letter or digit and holds only letters, digits, '.', '_', '-'"
    ),
    ("nodes", "*", "ports"): Hint(example="{1: [192.168.100.11/24, 192.168.101.11/24]}"),
    ("nodes", "*", "ports", "[key]"): Hint(
        rule="is not a QSFP port: a Spark has ports 0 and 1 (0 is the cage nearest the RJ45 port)"
    ),
    ("nodes", "*", "ports", "*"): Hint(
        example="[192.168.100.11/24, 192.168.101.11/24]",
        rule="rail addresses",
        note="one for each rail: the port's two PCIe halves",
    ),
    ("nodes", "*", "ports", "*", "*"): Hint(example="192.168.100.11/24"),
    ("nodes", "*", "ports", "*", "*", "netdev"): Hint(rule=argrules.NETDEV.words),
    ("nodes", "*", "ports", "*", "*", "rdma"): Hint(rule=argrules.RDMA.words),
    ("nodes", "*", "ssh", "user"): Hint(rule=argrules.USER.words),
    ("switch", "user"): Hint(rule=argrules.USER.words),
    ("switch", "ports", "*"): Hint(rule=argrules.SWITCH_PORT.words),
    ("nccl", "binary"): Hint(rule=argrules.BINARY_WORDS),
    ("switch", "password_env"): Hint(
        rule="it must be the name of an environment variable (letters, digits, '_')"
    ),
    ("switch", "ports"): Hint(example="{spark-1: qsfp56-dd-1-1, spark-2: qsfp56-dd-1-5}"),
    ("nccl", "size"): Hint(rule="a size is a whole number with an optional K, M or G"),
    ("thresholds", "*"): Hint(example="90"),
    ("simulate", "faults"): Hint(example="[{fault: link_down, node: spark-1}]"),
    ("simulate", "faults", "*"): Hint(example="{fault: link_down, node: spark-1}"),
}


# -- the derived, read-only view used everywhere else ------------------------------------------


@dataclass(frozen=True, slots=True)
class Rail:
    """One fabric netdev of one node (a PCIe half of one QSFP port)."""

    node: str
    port: int
    index: int
    address: IPv4Interface
    netdev: str
    rdma: str
    pci: str
    multi_port: bool

    @property
    def label(self) -> str:
        return f"p{self.port}rail{self.index}" if self.multi_port else f"rail{self.index}"

    @property
    def id(self) -> str:
        return f"{self.node}:{self.label}"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    ssh: SshSpec | None
    rails: tuple[Rail, ...]

    @property
    def ports(self) -> tuple[int, ...]:
        return tuple(sorted({r.port for r in self.rails}))

    def rails_of(self, port: int) -> tuple[Rail, ...]:
        return tuple(r for r in self.rails if r.port == port)

    def rail(self, port: int, index: int) -> Rail:
        return next(r for r in self.rails if r.port == port and r.index == index)


@dataclass(frozen=True)
class Cluster:
    spec: ClusterSpec
    source: Path | None
    nodes: tuple[Node, ...]
    located: Located | None = field(default=None, compare=False, repr=False)

    @property
    def topology(self) -> TopologyName:
        return self.spec.topology

    @property
    def mtu(self) -> int:
        return self.spec.mtu

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def rails(self) -> tuple[Rail, ...]:
        return tuple(r for n in self.nodes for r in n.rails)

    def line_of(self, path: Path_) -> int | None:
        return self.located.line_of(path) if self.located else None


def build_nodes(spec: ClusterSpec) -> tuple[Node, ...]:
    nodes = []
    for n in spec.nodes:
        multi = len(n.ports) > 1
        rails = []
        for port in sorted(n.ports):
            for index, rs in enumerate(n.ports[port]):
                std = hardware.rail_names(port, index)
                rails.append(
                    Rail(
                        node=n.name,
                        port=port,
                        index=index,
                        address=rs.address,
                        netdev=rs.netdev or std.netdev,
                        rdma=rs.rdma or std.rdma,
                        pci=std.pci,
                        multi_port=multi,
                    )
                )
        nodes.append(Node(name=n.name, ssh=n.ssh, rails=tuple(rails)))
    return tuple(nodes)


# -- errors -----------------------------------------------------------------------------------


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a cluster file: where (path and line), what, and how to fix it.

    `message` continues the path as a sentence: path `topology`, message `'mesh' needs ...`."""

    path: Path_
    line: int | None
    message: str
    fix: str

    def render(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        text = f"{format_path(self.path)} {self.message}" if self.path else self.message
        out = f"  {where}{_sentence(text)}"
        return out + (f"\n    Fix: {_sentence(self.fix)}" if self.fix else "")


class ConfigError(Exception):
    """Every problem of one cluster file; str() is the message a user reads. Never empty."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        unique: dict[tuple[Path_, str], Problem] = {}
        for p in problems:
            unique.setdefault((p.path, p.message), p)
        if not unique:
            unique[((), "")] = Problem((), None, "is not a valid cluster file", "")
        self.problems = sorted(
            unique.values(), key=lambda p: (p.line or 0, format_path(p.path), p.message)
        )
        super().__init__(self.render())

    def render(self) -> str:
        n = len(self.problems)
        head = f"{self.source}: {n} problem{'s' if n != 1 else ''}"
        return "\n".join([head, *(p.render() for p in self.problems)])


_START = "start from the output of `sparkfabric init --topology ... --nodes ...`"


def parse_cluster(text: str, source: str = "cluster.yaml", path: Path | None = None) -> Cluster:
    """Validate cluster text completely; raise ConfigError listing every problem."""
    from pytest_sparkfabric.cluster import topology

    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        what = f"{context}, {what}" if context else what
        raise ConfigError(
            source,
            [Problem((), line, f"the file is not valid YAML: {what}", "fix the YAML at that line")],
        ) from None
    except TooComplex as exc:
        raise ConfigError(
            source, [Problem((), None, f"the file cannot be read: {exc}", _START)]
        ) from None
    problems = [_from_source(p) for p in located.problems]
    data = located.data
    if data is None:
        problems.append(Problem((), None, "the file is empty", _START))
        raise ConfigError(source, problems)
    if not isinstance(data, dict):
        problems.append(
            Problem(
                (),
                located.line_of(()),
                "the top level must be a mapping of keys (topology:, nodes:, ...); "
                f"got {seen(data)}",
                _START,
            )
        )
        raise ConfigError(source, problems)
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError as err:
        problems += [_from_source(p) for p in validation_problems(err, located, ClusterSpec, HINTS)]
        # The rules that need no valid shape still run, so one problem never hides another.
        problems += _located(topology.check_data(data), located)
        raise ConfigError(source, problems) from None
    cluster = Cluster(spec=spec, source=path, nodes=build_nodes(spec), located=located)
    problems += _located(topology.check(cluster), located)
    if problems:
        raise ConfigError(source, problems)
    return cluster


def _located(found: list[topology.TopoProblem], located: Located) -> list[Problem]:
    return [Problem(p.path, located.line_of(p.path), p.message, p.fix) for p in found]


def _from_source(p: SourceProblem) -> Problem:
    return Problem(p.path, p.line, p.message, p.fix)


def load_cluster(path: str | Path) -> Cluster:
    """Read and validate a cluster file; raise ConfigError listing every problem."""
    p = Path(path)
    try:
        text = read_small_text(p)
    except NotASmallFile as exc:
        raise ConfigError(str(p), [Problem((), None, exc.what, exc.fix)]) from None
    except FileNotFoundError:
        raise ConfigError(
            str(p), [Problem((), None, "the file does not exist", "check the path")]
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            str(p),
            [Problem((), None, f"the file is not UTF-8 text ({exc.reason})", "save it as UTF-8")],
        ) from None
    except OSError as exc:
        raise ConfigError(
            str(p), [Problem((), None, f"the file cannot be read: {exc.strerror or exc}", "")]
        ) from None
    return parse_cluster(text, source=str(path), path=p.resolve())
