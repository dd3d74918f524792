"""The shape of cluster.yaml: pydantic models, SshSpec up to ClusterSpec.

The `description` of every field is also the field reference (docs/cluster-yaml.md,
`sparkfabric schema`), which is why this module is long: the text is the documentation. The
cabling and address rules live in `rules.py`; `load.py` validates a file against these models.
"""

# Over 400 lines on purpose: the pydantic model of cluster.yaml: its field descriptions are the
# docs (docs/cluster-yaml.md is generated from them).

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Interface
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from pytest_sparkfabric.cluster import argrules
from pytest_sparkfabric.cluster.faults import FaultName
from pytest_sparkfabric.cluster.thresholds import NAMES as THRESHOLD_NAMES
from pytest_sparkfabric.cluster.wording import seen

TopologyName = Literal["direct", "mesh", "ring", "switch"]
TransportName = Literal["ssh", "sim", "replay"]
PortNumber = Literal[0, 1]
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
    api: Literal["rest", "ssh", "auto"] = Field(
        default="rest",
        description="How to read the switch: its REST API, its SSH console (print/monitor "
        "only), or auto: REST, and SSH where REST cannot be reached (the report says which).",
    )
    api_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Port of the API; default: 443 for rest, 22 for ssh (with auto: REST's).",
    )
    ssh_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="SSH port of the switch with api auto; default 22 (with api ssh, "
        "api_port is the SSH port).",
    )
    identity_file: str | None = Field(
        default=None,
        min_length=1,
        description="Private key for SSH reads (api ssh or auto; the user's public key "
        "imported with /user/ssh-keys/import); default: ssh's own (agent, ~/.ssh/config).",
        examples=["~/.ssh/switch_ed25519"],
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


_LAUNCHER_KEYS = ("ranks", "hosts", "env_flags", "binary", "size", "mgmt_netdev")
# The placeholders that carry text; the others are digits (and K, M, G) wherever they stand.
_LAUNCHER_TEXT = ("hosts", "env_flags", "binary", "mgmt_netdev")


class NcclSpec(_Model):
    """How the NCCL test (nccl-tests) is launched across the nodes."""

    launcher: str = Field(
        default=(
            "mpirun --allow-run-as-root -np {ranks} -H {hosts} -x PATH -x LD_LIBRARY_PATH "
            "--mca btl_tcp_if_include {mgmt_netdev} --mca oob_tcp_if_include {mgmt_netdev} "
            "{env_flags} {binary} -b {size} -e {size} -f 2 -g 1"
        ),
        description="Command template run on the launch node (shell text); placeholders: "
        "{ranks}, {hosts} (ip1:1,ip2:1,...), {env_flags}, {binary}, {size}, {mgmt_netdev}. "
        "Each is filled in as quoted shell words, so {hosts}, {env_flags}, {binary} and "
        "{mgmt_netdev} must stand outside quotes. The default exports PATH and LD_LIBRARY_PATH "
        "(the ranks' non-interactive ssh shells lack the login PATH) and pins Open MPI's TCP "
        "BTL and out-of-band traffic to the management netdev, so it never picks docker0 or a "
        "down interface.",
    )
    mgmt_netdev: NetdevName = Field(
        default="enP7s7",
        description="The management network interface every node shares (the 10GbE port "
        "enP7s7 on a Spark): {mgmt_netdev} in the launcher, for Open MPI's "
        "btl_tcp_if_include and oob_tcp_if_include.",
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
        default="gpu_burn -m 80% {duration_s}",
        description="Command (shell text) that loads the GPU on every node for the soak; "
        "placeholder {duration_s} (whole seconds). Always cap memory with a percentage "
        "(-m 80%): it is shared with the OS, and gpu-burn reads -m 80 as 80 MB and aborts.",
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
    schedule: Literal["legs", "full", "stress"] = Field(
        default="legs",
        description=(
            "Which node pairs the bandwidth tests measure: legs (every node with its two "
            "neighbours in the node list, both ways: every cable or switch leg proven with two "
            "partners in 2-3 rounds at any size), full (every pair, N-1 rounds) or stress (one "
            "round, every node sending to the next at once)."
        ),
    )
    directions: Literal["together", "apart"] = Field(
        default="together",
        description=(
            "together: a pair's two directions run at once, each its own one-way test with its "
            "own figure; apart: one direction per round (twice the rounds)."
        ),
    )
    confirm: bool = Field(
        default=True,
        description=(
            "Re-test a node that fails with both its partners against a third one, to confirm "
            "it is the node and not its partners (switch clusters of 4 or more nodes)."
        ),
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
    rate_per_s: float | None = Field(
        default=None,
        gt=0,
        description="A steady error rate (corrected bits/s) on the lane instead of the growth "
        "with temperature (lane_degradation); it never drops the link.",
    )


class SimulateSpec(_Model):
    """The simulated cluster (transport sim): a seed and the faults to inject."""

    seed: int = Field(default=0, description="Seed of the simulator's noise, for repeatable runs.")
    faults: tuple[FaultSpec, ...] = Field(
        default=(), description="Faults to inject; an empty list simulates a healthy cluster."
    )
    nccl_version: str | None = Field(
        default=None,
        pattern=r"^[0-9]+\.[0-9]+\.[0-9]+(\+cuda[0-9]+\.[0-9]+)?$",
        description="NCCL version of the simulated nodes (default 2.28.9, the build NVIDIA's "
        "setup script compiles); NCCL_IB_HCA is read by that version's grammar.",
        examples=["2.30.7"],
    )
    command_latency_ms: int = Field(
        default=0,
        ge=0,
        le=10000,
        description=(
            "Extra latency (ms) of every remote command, as an ssh round trip to a far cluster "
            "would add; commands beyond max_sessions at once to one node wait a round each."
        ),
    )
    max_sessions: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="Commands one node runs at once over its connection (sshd MaxSessions, 10).",
    )


class ClusterSpec(_Model):
    """cluster.yaml: the fabric of a DGX Spark cluster, as pytest-sparkfabric accepts it."""

    topology: TopologyName = Field(
        description="How the Sparks are cabled: direct (2 nodes, one cable, same port number at "
        "both ends), mesh (3 nodes, port 0 of each to port 1 of the next), ring (4 or more, "
        "port 0 to port 1 of the next, the last back to the first) or switch (2 to 128 nodes, one "
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
        + ", ".join(sorted(THRESHOLD_NAMES))
        + ". A failure shows the limit and where it came from.",
        examples=[{"rail_rdma_gbps": 90}],
        json_schema_extra={"propertyNames": {"enum": [k for k in sorted(THRESHOLD_NAMES)]}},
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
