"""The NCCL environment a job on a node will really see (DOMAIN.md §3).

Sources, in NCCL's order: the job environment from cluster.yaml (`nccl.env`, passed by the
launcher), then `$NCCL_CONF_FILE` if the job sets it, else `~/.nccl.conf` of the ssh user, then
`/etc/nccl.conf`. The files are read on the node; which of them decides is pure logic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName
from pytest_sparkfabric.outcome import Measured
from pytest_sparkfabric.probes.nccl_hca import NcclVersion, find_nccl_version
from pytest_sparkfabric.probes.ncclconf import (
    Decided,
    EnvSource,
    SourceKind,
    effective_nccl_env,
)
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric

NAME: PhaseName = "nccl_env"
JOB_ENV_NAME = "cluster.yaml nccl.env"


@dataclass(frozen=True, slots=True)
class ConfRead:
    """One file to read: its name in reports, its kind in NCCL's order, the command."""

    name: str
    kind: SourceKind
    command: str


def conf_reads(job_env: Mapping[str, str]) -> tuple[ConfRead, ...]:
    reads = [
        ConfRead("~/.nccl.conf", "user_conf", shell.join(["cat", shell.home_path("~/.nccl.conf")])),
        ConfRead("/etc/nccl.conf", "system_conf", shell.join(["cat", "/etc/nccl.conf"])),
    ]
    conf_file = job_env.get("NCCL_CONF_FILE")
    if conf_file:
        # NCCL opens the path as it is (no ~): quoted whole, after `--` in case of a leading -.
        reads.insert(0, ConfRead(conf_file, "conf_file", shell.join(["cat", "--", conf_file])))
    return tuple(reads)


def read_error(read: ConfRead, r: RunResult) -> str | None:
    """A missing file is normal (None); anything else that stops the read is an error."""
    failure = r.failure()
    if failure:
        return failure
    if r.rc != 0 and "No such file" not in r.stderr:
        return f"{r.node}: cannot read {read.name}: {r.stderr.strip() or f'rc {r.rc}'}"
    return None


def decide(
    job_env: Mapping[str, str], reads: tuple[ConfRead, ...], results: list[RunResult]
) -> dict[str, Decided]:
    sources = [EnvSource.from_mapping(JOB_ENV_NAME, job_env)]
    for read, r in zip(reads, results, strict=True):
        if r.rc == 0:
            sources.append(EnvSource.from_text(read.name, r.stdout, read.kind))
    return effective_nccl_env(sources)


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
    """By node: the NCCL variables a job there gets and where each comes from."""

    nodes: Mapping[str, Measured[dict[str, Decided]]]
    # The installed NCCL's version (from the library's file name), None when none was found.
    versions: Mapping[str, NcclVersion | None] | None = None


def measure(fabric: Fabric) -> NcclEnv:
    env = fabric.cluster.spec.nccl.env
    reads = conf_reads(env)
    nodes = [n.name for n in fabric.cluster.nodes]
    jobs = [Job(n, rd.command, QUICK_S) for n in nodes for rd in reads]
    jobs += [Job(n, VERSION_COMMAND, QUICK_S) for n in nodes]
    results = fabric.run_all(jobs)
    out: dict[str, Measured[dict[str, Decided]]] = {}
    for i, node in enumerate(nodes):
        mine = results[i * len(reads) : (i + 1) * len(reads)]
        errors = [e for rd, r in zip(reads, mine, strict=True) if (e := read_error(rd, r))]
        out[node] = Measured.failed(errors[0]) if errors else Measured.of(decide(env, reads, mine))
    tail = results[len(nodes) * len(reads) :]
    versions = {
        node: find_nccl_version(r.stdout) if r.rc == 0 else None
        for node, r in zip(nodes, tail, strict=True)
    }
    return NcclEnv(out, versions)


def version(fabric: Fabric, node: str) -> NcclVersion | None:
    """The NCCL version installed on `node`, None when no library was found."""
    versions = fabric.phase(NAME, measure).versions
    return versions.get(node) if versions else None


def effective(fabric: Fabric, node: str) -> Measured[dict[str, Decided]]:
    """The NCCL environment a job on `node` really sees, each variable with its source."""
    return fabric.phase(NAME, measure).nodes[node]
