"""The NCCL environment a job on a node really sees (DOMAIN.md §3), in NCCL's order: cluster.yaml
`nccl.env`, `$NCCL_CONF_FILE` if set, else `~/.nccl.conf`, then `/etc/nccl.conf`; and the
bootstrap interface it gives every node, with why it cannot work (missing, down, no address,
docker/virbr/lo, or a fabric netdev the other nodes cannot reach)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Interface
from typing import TYPE_CHECKING

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure import facts
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.ncclconf import (
    Decided,
    EnvSource,
    Iface,
    NcclVersion,
    SourceKind,
    effective_nccl_env,
    find_nccl_version,
    select_socket_ifs,
)
from pytest_sparkfabric.transport import Job

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.probes.ip import IpInterface

NAME: PhaseName = "nccl_env"
JOB_ENV_NAME = "cluster.yaml nccl.env"


def conf_reads(job_env: Mapping[str, str]) -> list[tuple[str, SourceKind, str]]:
    """The files to read, in NCCL's order: the name in reports, the kind, the command."""
    reads: list[tuple[str, SourceKind, str]] = [
        ("~/.nccl.conf", "user_conf", shell.join(["cat", shell.home_path("~/.nccl.conf")])),
        ("/etc/nccl.conf", "system_conf", shell.join(["cat", "/etc/nccl.conf"])),
    ]
    if conf_file := job_env.get("NCCL_CONF_FILE"):
        # NCCL opens the path as it is (no ~): quoted whole, after `--` in case of a leading -.
        reads.insert(0, (conf_file, "conf_file", shell.join(["cat", "--", conf_file])))
    return reads


# Where the NCCL packages (libnccl2) and a `make install` put the library; the shell expands
# each pattern, and one that matches nothing is echoed as it is (no version in it).
LIBRARY_GLOBS = (
    "/usr/lib/*-linux-gnu/libnccl.so.2.*",
    "/usr/local/lib/libnccl.so.2.*",
    "/usr/local/nccl/lib/libnccl.so.2.*",
)
VERSION_COMMAND = "echo " + " ".join(LIBRARY_GLOBS)


@dataclass(frozen=True, slots=True)
class NcclEnv:
    """By node: the NCCL variables a job there gets and where each comes from, and the
    installed NCCL's version (from the library's file name; None where none was found)."""

    nodes: Mapping[str, Measured[dict[str, Decided]]]
    versions: Mapping[str, NcclVersion | None]


def measure(fabric: Fabric) -> NcclEnv:
    env = fabric.cluster.spec.nccl.env
    reads = conf_reads(env)
    nodes = [n.name for n in fabric.cluster.nodes]
    jobs = [Job(n, command, QUICK_S) for n in nodes for _, _, command in reads]
    results = iter(fabric.run_all(jobs + [Job(n, VERSION_COMMAND, QUICK_S) for n in nodes]))
    out: dict[str, Measured[dict[str, Decided]]] = {}
    for node in nodes:
        sources = [EnvSource.from_mapping(JOB_ENV_NAME, env)]
        errors: list[str] = []
        for (name, kind, _), r in zip(reads, results, strict=False):
            # A missing file is normal; anything else that stops the read is an error.
            if failure := r.failure():
                errors.append(failure)
            elif r.rc != 0 and "No such file" not in r.stderr:
                errors.append(f"{r.node}: cannot read {name}: {r.stderr.strip() or f'rc {r.rc}'}")
            if r.rc == 0:
                sources.append(EnvSource.from_text(name, r.stdout, kind))
        out[node] = (
            Measured.failed(errors[0]) if errors else Measured.of(effective_nccl_env(sources))
        )
    found = {
        n: find_nccl_version(r.stdout) if r.rc == 0 else None
        for n, r in zip(nodes, results, strict=True)
    }
    return NcclEnv(out, found)


def version(fabric: Fabric, node: str) -> NcclVersion | None:
    """The NCCL version installed on `node`, None when no library was found."""
    return fabric.phase(NAME, measure).versions.get(node)


def effective(fabric: Fabric, node: str) -> Measured[dict[str, Decided]]:
    """The NCCL environment a job on `node` really sees, each variable with its source."""
    return fabric.phase(NAME, measure).nodes[node]


# -- the launch environment ---------------------------------------------------------------------

OMPI_IF_VARS = ("OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_oob_tcp_if_include")
"""Open MPI interface lists a job's environment may carry (mpirun -x)."""
VIRTUAL = ("docker", "virbr", "lo")


@dataclass(frozen=True, slots=True)
class SocketChoice:
    """A node's NCCL_SOCKET_IFNAME as NCCL reads it, what it selects, and what is wrong."""

    node: str
    setting: str
    """`NCCL_SOCKET_IFNAME=x (from where)`, or `NCCL_SOCKET_IFNAME unset`."""
    selected: tuple[str, ...]
    address: IPv4Interface | None
    problems: tuple[str, ...]
    down_fabric: bool = False
    """Nothing selected because every netdev it names is a fabric rail without link: the
    link is the cause (NVIDIA's two-node playbook bootstraps over the fabric netdev)."""


def socket_choice(fabric: Fabric, node: str) -> SocketChoice | None:
    """None where the node's environment or interfaces could not be read."""
    env, node_facts = effective(fabric, node), facts.node(fabric, node)
    if env.value is None or node_facts.value is None:
        return None
    found = dict(node_facts.value.interfaces)
    d = env.value.get("NCCL_SOCKET_IFNAME")
    setting = f"NCCL_SOCKET_IFNAME={d.value} (from {d.where})" if d else "NCCL_SOCKET_IFNAME unset"
    ifaces = [Iface(i.name, i.carrier, bool(i.ipv4 or i.ipv6)) for i in found.values()]
    selected = select_socket_ifs(d.value if d else None, ifaces)
    problems: list[str] = []
    address = None
    down_fabric = False
    if not selected:
        rails = {r.netdev for r in fabric.cluster.node(node).rails}
        named = [p.split(":")[0] for p in (d.value.lstrip("^=") if d else "").split(",") if p]
        down_fabric = bool(named) and all(
            n in rails and n in found and not found[n].carrier for n in named
        )
        why = "; ".join(_state(n, found.get(n)) for n in named if not n.startswith("^"))
        problems.append(
            f"{setting} selects no running interface with an address"
            + (f" ({why})" if why else "")
            + ": NCCL stops with 'Bootstrap : no socket interface found'"
        )
    else:
        first = found[selected[0]]
        address = first.ipv4[0] if first.ipv4 else None
        if selected[0].startswith(VIRTUAL):
            problems.append(
                f"{setting} makes NCCL bootstrap over {selected[0]}, a local virtual interface "
                "(docker0 has the same address on every node)"
            )
    for var in OMPI_IF_VARS:
        value = fabric.cluster.spec.nccl.env.get(var)
        for name in (value or "").split(","):
            if name and "/" not in name and not (name in found and found[name].carrier):
                problems.append(
                    f"{var}={value} (cluster.yaml nccl.env): {_state(name, found.get(name))}"
                )
    return SocketChoice(node, setting, tuple(selected), address, tuple(problems), down_fabric)


def _state(name: str, iface: IpInterface | None) -> str:
    if iface is None:
        return f"no interface {name}"
    if not iface.carrier:
        return f"{name} is down (no carrier)"
    if not (iface.ipv4 or iface.ipv6):
        return f"{name} has no address"
    return f"{name} is up"


def problems(fabric: Fabric, node: str, *, down_links: bool = True) -> list[str]:
    """Everything wrong with the launch environment of `node` (empty: fine or not read);
    without `down_links`, nothing where a fabric netdev without link is all that is wrong."""
    choice = socket_choice(fabric, node)
    if choice is None or (choice.down_fabric and not down_links):
        return []
    # A bootstrap address on a fabric rail the other nodes' bootstrap addresses are not on (a
    # ring or mesh netdev reaches one neighbour only). Unset, which interface NCCL takes first
    # follows the node's interface order, which a check cannot know for certain: only a setting
    # that names the fabric netdev is judged.
    here, rails = choice.address, {r.netdev for r in fabric.cluster.node(node).rails}
    if choice.setting.endswith("unset") or here is None or choice.selected[0] not in rails:
        return list(choice.problems)
    away = [
        f"{n.name} ({c.address.ip})"
        for n in fabric.cluster.nodes
        if n.name != node
        and (c := socket_choice(fabric, n.name)) is not None
        and c.address is not None
        and c.address.ip not in here.network
    ]
    far = (
        f"{choice.setting} bootstraps over the fabric netdev {choice.selected[0]} ({here}), "
        f"which {', '.join(away)} cannot reach"
    )
    return [*choice.problems, *([far] if away else [])]
