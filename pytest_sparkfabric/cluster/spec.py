"""The shape of cluster.yaml as pydantic models; each field's docstring is its entry in the
JSON Schema and so in docs/cluster-yaml.md. The cabling and address rules are in `validate.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from ipaddress import IPv4Interface
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from pytest_sparkfabric.cluster import argrules
from pytest_sparkfabric.cluster.argrules import seen
from pytest_sparkfabric.cluster.faults import FaultName
from pytest_sparkfabric.cluster.thresholds import ThresholdName

TopologyName = Literal["direct", "mesh", "ring", "switch"]
TransportName = Literal["ssh", "sim", "replay"]
PortNumber = Literal[0, 1]
LinkSpeed = Literal["200G", "100G"]
TOPOLOGIES: tuple[str, ...] = get_args(TopologyName)
LINK_SPEEDS_MBPS: dict[str, int] = {"200G": 200_000, "100G": 100_000}  # as ethtool's Speed:


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True
    )


NodeName = Annotated[str, argrules.NODE]
UserName = Annotated[str, argrules.USER]
NetdevName = Annotated[str, argrules.NETDEV]
RdmaName = Annotated[str, argrules.RDMA]
SwitchPortName = Annotated[str, argrules.SWITCH_PORT]
EnvName = Annotated[str, argrules.PASSWORD_ENV]
EnvKey = Annotated[str, replace(argrules.ENV_KEY, key=True)]
EnvValue = Annotated[str, BeforeValidator(argrules.check_env_value)]
SshHost = Annotated[str, Field(min_length=1), BeforeValidator(argrules.check_ssh_host)]
SwitchHost = Annotated[str, Field(min_length=1), BeforeValidator(argrules.check_switch_host)]
TcpPort = Annotated[int, Field(ge=1, le=65535)]
LocalPath = Annotated[str, Field(min_length=1)]


def _template(allowed: tuple[str, ...], text: tuple[str, ...]) -> BeforeValidator:
    return BeforeValidator(lambda value: argrules.check_template(value, allowed, text))


def _port_keys(value: Any) -> Any:
    # `"1":` (a quoted key) means port 1 too.
    if isinstance(value, Mapping):
        return {(int(k) if k in ("0", "1") else k): v for k, v in value.items()}
    return value


_PORT_KEYS: dict[str, Any] = {"propertyNames": {"enum": ["0", "1"]}}


class SshSpec(_Model):
    """How to reach a node's shell. ~/.ssh/config (or `ssh_config:`) applies, ProxyJump too."""

    host: SshHost = Field(examples=["10.0.0.11"])
    """Management address (IPv4 or IPv6; normally its 10GbE port, not a fabric address), host
    name or ~/.ssh/config Host alias of the node: letters, digits, '.', '_', '-', not first '-'."""
    user: UserName | None = Field(None, examples=["nvidia"])
    """Login user (letters, digits, '.', '_', '@', '-'; never starting with '-'); default:
    ~/.ssh/config, else the local user."""
    port: TcpPort | None = None
    """SSH port; default: ~/.ssh/config, else 22."""
    identity_file: LocalPath | None = Field(None, examples=["~/.ssh/id_ed25519"])
    """Private key file to log in with; default: ~/.ssh/config and the ssh agent."""


def _address_text(value: Any) -> Any:
    if isinstance(value, str) and "/" not in value:
        fix = f"write it with its subnet, e.g. {value.strip()}/24"
        raise argrules.error("address_prefix", f"{seen(value)} has no prefix length", fix)
    return value


class RailSpec(_Model):
    """One fabric interface: a PCIe half of a QSFP port, with its own address. Written either as
    its address alone (`192.168.100.11/24`) or as this mapping."""

    address: Annotated[IPv4Interface, BeforeValidator(_address_text)] = Field(
        examples=["192.168.100.11/24"]
    )
    """IPv4 address with prefix length, e.g. 192.168.100.11/24. Every rail interface needs its
    own address; the subnet plan follows the topology."""
    netdev: NetdevName | None = Field(None, examples=["enp1s0f1np1"])
    """Linux interface name (at most 15 letters, digits, '.', '_', '-', not first '.' or '-');
    default: the Spark's standard name (port 1: enp1s0f1np1, enP2p1s0f1np1)."""
    rdma: RdmaName | None = Field(None, examples=["rocep1s0f1"])
    """RoCE device name (letters, digits, '.', '_', '-', not first '.' or '-'); default: the
    Spark's standard name (port 1: rocep1s0f1, roceP2p1s0f1)."""


def _rail_entry(value: Any) -> Any:
    if isinstance(value, str):
        return {"address": value}
    if not isinstance(value, Mapping | RailSpec):
        raise argrules.error(
            "rail_type",
            "must be an address like 192.168.100.11/24 or a mapping "
            "{address: ..., netdev: ..., rdma: ...}; got " + seen(value),
            "write it like 192.168.100.11/24",
        )
    return value


RailEntry = Annotated[RailSpec, BeforeValidator(_rail_entry, json_schema_input_type=str | RailSpec)]
PortRails = Annotated[dict[PortNumber, tuple[RailEntry, RailEntry]], BeforeValidator(_port_keys)]
PortSpeeds = Annotated[dict[PortNumber, LinkSpeed], BeforeValidator(_port_keys)]


class NodeSpec(_Model):
    """One Spark (or GX10): its name, how to reach it, and its cabled QSFP ports."""

    name: NodeName = Field(examples=["spark-1"])
    """Name used in test ids and reports; unique in the file (letters, digits, '.', '_', '-',
    starting with a letter or digit)."""
    ssh: SshSpec | None = Field(None, examples=[{"host": "10.0.0.11", "user": "nvidia"}])
    """How to log in (needed with transport ssh)."""
    ports: PortRails = Field(
        examples=[{1: ["192.168.100.11/24", "192.168.101.11/24"]}], json_schema_extra=_PORT_KEYS
    )
    """Cabled QSFP port (0: the cage nearest the RJ45 port, or 1) -> [rail 0, rail 1]: the
    port's two PCIe halves, each its own interface with its own address. Direct and switch: the
    one cabled port; ring and mesh: both."""
    link_speed: PortSpeeds = Field(
        default_factory=dict, examples=[{1: "100G"}], json_schema_extra=_PORT_KEYS
    )
    """Cabled port -> its link's declared speed, where not the cluster's `link_speed`."""


class SwitchSpec(_Model):
    """The switch of a `switch` topology, read (never changed) to check ports, offload and PFC."""

    vendor: Literal["routeros"] = "routeros"
    """Switch operating system: MikroTik RouterOS 7."""
    host: SwitchHost = Field(examples=["10.0.0.2"])
    """Management address (IPv4 or IPv6) or host name of the switch."""
    user: UserName = Field(examples=["sparkfabric"])
    """A read-only user (a group with the read, api and rest-api policies); letters, digits,
    '.', '_', '@', '-', never starting with '-'."""
    password_env: EnvName | None = Field(None, examples=["SWITCH_PASSWORD"])
    """Environment variable that holds the password; the password is never in the file."""
    api: Literal["rest", "ssh", "auto"] = "rest"
    """How to read the switch: its REST API, its SSH console (print/monitor only), or auto:
    REST, and SSH where REST cannot be reached (the report says which)."""
    api_port: TcpPort | None = None
    """Port of the API; default: 443 for rest, 22 for ssh (with auto: REST's)."""
    ssh_port: TcpPort | None = None
    """SSH port with api auto; default 22 (with api ssh, api_port is the SSH port)."""
    identity_file: LocalPath | None = Field(None, examples=["~/.ssh/switch_ed25519"])
    """Private key for SSH reads (api ssh or auto; the user's public key imported with
    /user/ssh-keys/import); default: ssh's own (agent, ~/.ssh/config)."""
    verify_tls: bool = True
    """Verify the switch's HTTPS certificate (rest). Off, whoever answers at the address gets
    the password: prefer ca_file."""
    ca_file: LocalPath | None = Field(None, examples=["switch-ca.pem"])
    """PEM file of the certificate authority that signed the switch's HTTPS certificate (e.g.
    its self-signed certificate, exported), relative to this file; default: the system's store
    (or $SSL_CERT_FILE). The certificate must name host."""
    allow_http: bool = False
    """Allow plain HTTP (api_port 80, RouterOS's www service): the user and password then cross
    the network unencrypted; the report warns."""
    ports: dict[str, SwitchPortName] = Field(
        default_factory=dict,
        examples=[{"spark-1": "qsfp56-dd-1-1", "spark-2": "qsfp56-dd-1-5"}],
    )
    """Node name -> the switch interface (breakout leg, e.g. qsfp56-dd-1-1) its cable lands on,
    one per node: letters, digits, '.', '_', '-'."""
    link_speed: dict[str, LinkSpeed] = Field({}, examples=[{"qsfp56-dd-2-5": "100G"}])
    """Switch interface (one of `ports`) -> the speed its leg is declared to run at, where it
    differs from the cluster's `link_speed` (e.g. a 4x100G breakout). A node port's own
    `link_speed` wins."""


# NVIDIA dgx-spark-playbooks nccl/README.md: NCCL built in ~/nccl (NCCL_HOME=$HOME/nccl/build),
# CUDA_HOME=/usr/local/cuda, MPI_HOME=/usr/lib/aarch64-linux-gnu/openmpi, and
# LD_LIBRARY_PATH="$NCCL_HOME/lib:$CUDA_HOME/lib64/:$MPI_HOME/lib"; nccl-tests in ~/nccl-tests.
PLAYBOOK_LD_LIBRARY_PATH = (
    "$HOME/nccl/build/lib:/usr/local/cuda/lib64:/usr/lib/aarch64-linux-gnu/openmpi/lib"
)
_LAUNCHER_KEYS = ("ranks", "hosts", "env_flags", "binary", "size", "mgmt_netdev")
# The placeholders that carry text; the others are digits (and K, M, G) wherever they stand.
_LAUNCHER_TEXT = ("hosts", "env_flags", "binary", "mgmt_netdev")


class NcclSpec(_Model):
    """How the NCCL test (nccl-tests) is launched across the nodes."""

    launcher: Annotated[str, _template(_LAUNCHER_KEYS, _LAUNCHER_TEXT)] = (
        "mpirun --allow-run-as-root -np {ranks} -H {hosts} "
        f"-x LD_LIBRARY_PATH={PLAYBOOK_LD_LIBRARY_PATH} "
        "--mca btl_tcp_if_include {mgmt_netdev} --mca oob_tcp_if_include {mgmt_netdev} "
        "{env_flags} {binary} -b {size} -e {size} -f 2 -g 1"
    )
    """Command template run on the launch node (shell text); placeholders: {ranks}, {hosts}
    (ip1:1,ip2:1,...), {env_flags}, {binary}, {size}, {mgmt_netdev}, each filled in as quoted
    shell words (so {hosts}, {env_flags}, {binary}, {mgmt_netdev} stand outside quotes). The
    default gives the ranks the library path of NVIDIA's nccl playbook explicitly (a
    non-interactive ssh shell has no `~/nccl/build/lib` to export) and pins Open MPI's TCP
    traffic to the management netdev (never docker0 or a down one)."""
    mgmt_netdev: NetdevName = "enP7s7"
    """The management netdev of every node (a Spark's 10GbE port): {mgmt_netdev} in launcher."""
    env_flag: Annotated[str, _template(("key", "value"), ("key", "value"))] = "-x {key}={value}"
    """How one variable of `env` is passed to the launcher: {key} and {value}, quoted words."""
    binary: Annotated[str, argrules.BINARY] = "~/nccl-tests/build/all_reduce_perf"
    """The nccl-tests binary to run: a name or path of letters, digits, '.', '_', '+', '/', '-'
    (not first '-'; ~/ at the start means the login user's home)."""
    size: str = Field("16G", pattern=r"^[0-9]+[KMG]?$", examples=["16G"])
    """Message size for -b/-e: a whole number of bytes with an optional K, M or G."""
    launch_node: str | None = None
    """Node that runs the launcher; default: the first node."""
    timeout_s: float = Field(900, gt=0)
    """Seconds before the run is stopped."""
    env: dict[EnvKey, EnvValue] = Field(default_factory=dict, examples=[{"NCCL_DEBUG": "INFO"}])
    """Job environment for the ranks, passed by the launcher (e.g. NCCL_IB_HCA, NCCL_SOCKET_IFNAME);
    it wins over the nodes' nccl.conf files. NCCL_DEBUG=INFO is always added so the transport can
    be checked. Keys are variable names (letters, digits, '_'; not starting with a digit); values
    are any text, passed quoted."""


class SoakSpec(_Model):
    """The heat soak: links saturated and GPUs burning while per-lane error rates are sampled."""

    duration_s: float = Field(600, gt=0)
    """Length of the soak in seconds."""
    interval_s: float = Field(10, gt=0)
    """Seconds between samples of the link counters."""
    gpu_load: Annotated[str, _template(("duration_s",), ())] = "gpu_burn -m 50% {duration_s}"
    """Command (shell text) that loads the GPU on every node for the soak; placeholder
    {duration_s} (whole seconds). Always cap memory with a percentage (-m 50%: half of what
    CUDA reports free, which on GB10 is the OS's memory too; the heat comes from the compute,
    not the buffers, docs/thresholds.md); gpu-burn reads -m 50 as 50 MB and aborts."""


class BandwidthSpec(_Model):
    """Settings of the RDMA (ib_write_bw) and TCP (iperf3) bandwidth tests."""

    qps: int = Field(4, ge=1, le=64)
    """RDMA queue pairs per test (-q)."""
    duration_s: int = Field(10, ge=1, le=600)
    """Seconds each bandwidth test runs (-D / -t)."""
    iperf3_streams: int = Field(4, ge=1, le=128)
    """Parallel TCP streams per netdev (-P)."""
    base_port: int = Field(18515, ge=1024, le=65000)
    """First TCP port the test servers listen on; the suite uses a few above it."""
    schedule: Literal["legs", "full", "stress"] = "legs"
    """Which node pairs the bandwidth tests measure: legs (every node with its two neighbours in
    the node list, both ways: every cable or switch leg proven with two partners in 2-3 rounds),
    full (every pair, N-1 rounds) or stress (one round, every node sending to the next at once)."""
    directions: Literal["apart", "together"] = "apart"
    """apart (the default): one direction per round, judged against the one-way figures every
    healthy Spark measurement was published as; together: a pair's two directions at once
    (half the rounds), each its own test, judged against the full-duplex floors (~170 Gb/s
    each way published, docs/thresholds.md)."""
    confirm: bool = True
    """Re-test a node failing with both partners against a third (switch, 4 or more nodes)."""


class ApprovedCable(_Model):
    """One cable model on the approved list."""

    vendor: str = Field(min_length=1, examples=["Amphenol"])
    """Vendor name as the module EEPROM gives it (`ethtool -m`: Vendor name)."""
    part: str = Field(min_length=1, examples=["NJAAKK-N911"])
    """Vendor part number, or its beginning (`ethtool -m`: Vendor PN)."""


# NVIDIA's approved Spark cables (DOMAIN.md §6: NVIDIA's DGX Spark cable list), QSFP112 DACs.
NVIDIA_APPROVED = (
    ApprovedCable(vendor="Amphenol", part="NJAAKK-N911"),
    ApprovedCable(vendor="Amphenol", part="NJAAKK0006"),
    ApprovedCable(vendor="Luxshare", part="LMTQF022-SD-R"),
)


class CablesSpec(_Model):
    """The cables a cable check accepts without a warning."""

    approved: tuple[ApprovedCable, ...] = NVIDIA_APPROVED
    """The approved cable models (default: NVIDIA's Spark list). A module is approved when its
    EEPROM vendor name starts with an entry's vendor and its part number with the entry's part,
    both ignoring case and the EEPROM's padding spaces; any other cable passes with a warning."""


class FaultSpec(_Model):
    """One fault the simulated cluster injects; which targets each fault takes is checked."""

    fault: FaultName = Field(examples=["link_down"])
    """The fault to inject."""
    node: str | None = None
    """The node it affects."""
    rail: Literal[0, 1] | None = None
    """The rail it affects."""
    port: PortNumber | None = None
    """The QSFP port it affects."""
    lane: Literal[0, 1, 2, 3] | None = None
    """The cable lane it affects (lane_degradation)."""
    switch_port: str | None = None
    """The switch port it affects."""
    value: int | None = None
    """A number the fault needs (mtu: the MTU)."""
    onset_c: float | None = None
    """NIC temperature (C) at which the fault starts."""
    command: str | None = None
    """The command the fault is about: the one that hangs (command_hangs), is not installed
    (tool_missing), or loses the node (node_lost)."""
    rate_per_s: float | None = Field(None, gt=0)
    """A steady error rate (corrected bits/s) on the lane instead of the growth with temperature
    (lane_degradation); it never drops the link."""


class SimulateSpec(_Model):
    """The simulated cluster (transport sim): a seed and the faults to inject."""

    seed: int = 0
    """Seed of the simulator's noise, for repeatable runs."""
    faults: tuple[FaultSpec, ...] = Field((), examples=[[{"fault": "link_down", "node": "a"}]])
    """Faults to inject; none: a healthy cluster."""
    full_duplex_gbps: float = Field(170, gt=0, le=200)
    """What one port carries in each direction (Gb/s, at 200G; scaled with the link's speed)
    while both of its directions run at once. Default: the one published full-duplex run of
    two Sparks, ~340 Gb/s, ~170 each way (catharsis.net.au); one-way it is 185-198."""
    nccl_version: str | None = Field(
        None, pattern=r"^[0-9]+\.[0-9]+\.[0-9]+(\+cuda[0-9]+\.[0-9]+)?$", examples=["2.30.7"]
    )
    """NCCL version of the simulated nodes (default 2.28.9, the build NVIDIA's setup script
    compiles); NCCL_IB_HCA is read by that version's grammar."""
    command_latency_ms: int = Field(0, ge=0, le=10000)
    """Extra latency (ms) of every remote command, as an ssh round trip to a far cluster adds;
    commands beyond max_sessions at once to one node wait a round each."""
    max_sessions: int = Field(10, ge=1, le=1000)
    """Commands one node runs at once over its connection (sshd MaxSessions, 10)."""
    profile: Literal["stock", "prepared"] = "prepared"
    """prepared: every node has what the suite runs (perftest, iperf3, lldpd, gpu-burn, Open MPI,
    NCCL and nccl-tests built per NVIDIA's playbooks, passwordless sudo); stock: only what DGX OS
    ships (nvidia-smi, ethtool, iproute2, OpenSSH) and a sudo that asks for a password."""
    kernel_lanes: bool = False
    """Whether `ethtool NETDEV` prints `Lanes:` (mlx5 does from Linux 6.15; the DGX OS 6.11
    kernel the simulator models does not)."""
    cable_type: Literal["qsfp56", "qsfp112"] | None = None
    """The Spark-side cables: qsfp112 (2 x 100G PAM4, CMIS EEPROM) or qsfp56 (4 x 50G PAM4,
    SFF-8636 EEPROM); default: qsfp112 node to node, qsfp56 breakout legs behind a switch."""
    lane_trickle_per_s: float = Field(3.0, ge=0, le=1e6)
    """Healthy corrected errors per second on each lane in use (each lane 0.5-1.5x this, seeded):
    a few for a QSFP56 DAC, up to thousands for QSFP112 PAM4 lanes."""


class ClusterSpec(_Model):
    """cluster.yaml: the fabric of a DGX Spark cluster, as pytest-sparkfabric accepts it."""

    topology: TopologyName = Field(examples=["ring"])
    """How the Sparks are cabled: direct (2 nodes, one cable, same port number at both ends), mesh
    (3 nodes, port 0 of each to port 1 of the next), ring (4 or more, port 0 to port 1 of the
    next, the last back to the first) or switch (2 to 128 nodes, one cable each to one switch,
    the same port number on every node)."""
    mtu: int = Field(9000, ge=576, le=9216, examples=[9000])
    """MTU every fabric netdev must carry end to end (checked with don't-fragment pings of
    MTU-28 bytes). NVIDIA documents 9000 for direct, 1500 for mesh."""
    link_speed: LinkSpeed = "200G"
    """The speed every link is declared to run at (a Spark's QSFP port runs 200G; 100G for
    100G cables or 4x100G switch breakouts). Node ports (`nodes[].link_speed`) and switch legs
    (`switch.link_speed`) may say otherwise; a link below its declared speed fails."""
    nodes: tuple[NodeSpec, ...] = Field(
        examples=[[{"name": "spark-1", "ssh": {"host": "10.0.0.11"}, "ports": {1: ["..."]}}]]
    )
    """The nodes; ring and mesh: in cable order (port 0 of each to port 1 of the next)."""
    switch: SwitchSpec | None = None
    """The switch; required with topology switch, not allowed else."""
    transport: TransportName = "ssh"
    """How the suite reaches the nodes: ssh, sim (see simulate) or replay (see replay_dir)."""
    ssh_config: str | None = None
    """An ssh_config file to use instead of ~/.ssh/config."""
    output_cap_mib: int = Field(16, ge=1, le=1024)
    """Most output kept per command and stream (stdout, stderr), in MiB, in memory and in
    recordings: beyond it the middle is dropped and a marker says how much."""
    arp_sysctls: bool = False
    """true when fabric interfaces of one node share a subnet on purpose and every node sets
    arp_ignore=1, arp_announce=2 and rp_filter 0 or 2 (otherwise two interfaces of one node in
    one subnet is an error: ARP flux)."""
    thresholds: dict[ThresholdName, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict, examples=[{"rail_rdma_gbps": 90}]
    )
    """Pass/fail limits that replace the defaults, by name (see the table below). A failure
    shows the limit and where it came from."""
    cables: CablesSpec = Field(default_factory=CablesSpec)
    """The approved cable list."""
    nccl: NcclSpec = Field(default_factory=NcclSpec)
    """The NCCL test."""
    soak: SoakSpec = Field(default_factory=SoakSpec)
    """The heat soak."""
    bandwidth: BandwidthSpec = Field(default_factory=BandwidthSpec)
    """The bandwidth tests."""
    simulate: SimulateSpec | None = None
    """The simulated cluster (transport sim)."""
    replay_dir: LocalPath | None = None
    """Folder of a recorded run to replay (transport replay)."""
