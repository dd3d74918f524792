"""The NCCL environment a job on a node will really see (DOMAIN.md §3).

Sources, in NCCL's order: the job environment from cluster.yaml (`nccl.env`, passed by the
launcher), then `$NCCL_CONF_FILE` if the job sets it, else `~/.nccl.conf` of the ssh user, then
`/etc/nccl.conf`. The files are read on the node; which of them decides is pure logic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes.ncclconf import (
    Decided,
    EnvSource,
    SourceKind,
    effective_nccl_env,
)
from pytest_sparkfabric.transport import RunResult

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
