"""The results document of one run (`--sparkfabric-json PATH`): typed, frozen, the one model.
The reports and `--sparkfabric-baseline` read it back with `read()`; `sparkfabric schema
--results` prints the JSON Schema generated from it. A change that breaks a reader of this
version raises `VERSION`.

Object ids follow one grammar (`pytest_sparkfabric.objects`): node `spark-1`; port `spark-1:p0`;
rail `spark-1:p0rail1` (`spark-1:rail1` where a node has one cabled port); switch leg
`switch:qsfp56-dd-1-1`; link `spark-1:p0rail1<->spark-2:p1rail1`; direction
`spark-1:p0rail1->spark-2:p1rail1`; cable `spark-1:p0<->spark-2:p1` or
`spark-1:p1<->switch:qsfp56-dd-1-1`; node pair `spark-1<->spark-2`."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

VERSION: Literal[2] = 2
MAX_BYTES = 256 * 1024 * 1024
"""A results document larger than this is refused before it is read (a 128-node run with a
60-minute soak writes a few tens of MB)."""

Outcome = Literal["passed", "warned", "failed", "not_measured"]
"""passed; warned (passed, with a warning worth reading); failed (the fabric failed the check);
not_measured (the check could not measure: a tool missing, sudo refused, a node lost)."""
Verdict = Literal["accepted", "rejected", "incomplete"]
Status = Literal["pass", "warn", "fail", "not_measured", "unknown"]
"""An object's worst outcome: `unknown` where no check looked at it."""
Topology = Literal["direct", "mesh", "ring", "switch"]
Ids = tuple[Annotated[str, Field(min_length=1)], ...]
Figure = float | str | None

STATUS_OF: dict[Outcome, Status] = {
    "passed": "pass",
    "warned": "warn",
    "failed": "fail",
    "not_measured": "not_measured",
}
_RANK: dict[Status, int] = {"unknown": 0, "pass": 1, "warn": 2, "not_measured": 3, "fail": 4}


def worst(statuses: Iterable[Status]) -> Status:
    return max(statuses, key=_RANK.__getitem__, default="unknown")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class NodeInfo(_Model):
    name: str
    ports: tuple[int, ...] = Field(description="Its cabled QSFP ports.")


class ClusterInfo(_Model):
    """The cluster under test, as cluster.yaml describes it."""

    name: str = Field(description="The cluster file's name without its suffix.")
    path: str | None = Field(default=None, description="The cluster file as given.")
    topology: Topology
    transport: str | None = Field(default=None, description="ssh, sim or replay.")
    nodes: tuple[NodeInfo, ...]
    switch: str | None = Field(default=None, description="The switch's host, if one.")


class WarningNote(_Model):
    """Something a passing check found worth reading (`--sparkfabric-strict` fails on it)."""

    message: str
    rule: str | None = Field(default=None, description="The rule (docs/diagnosis.md), if one.")
    objects: Ids = Field(default=(), description="What it is about.")


class Item(_Model):
    """One check (a pytest item) as it ended."""

    id: str = Field(
        description="Its id relative to the shipped suite, the same from any directory and "
        "install (`test_bandwidth.py::test_rail_rdma[spark-1:rail0<->spark-2:rail0]`); JUnit "
        "XML and the terminal use it too."
    )
    outcome: Outcome
    node: str | None = Field(default=None, description="The node it is about, if one.")
    rail: str | None = Field(default=None, description="The rail label, if one.")
    measured: Figure = Field(default=None, description="What was measured (number or text).")
    expected: Figure = Field(default=None, description="What was expected (`>= 80 Gb/s`).")
    unit: str | None = Field(default=None, description="The unit of a numeric `measured`.")
    objects: Ids = Field(default=(), description="The objects it is about (ids).")
    rule: str | None = Field(default=None, description="The rule its failure names, if one.")
    message: str | None = Field(default=None, description="Why it failed or was not measured.")
    duration_s: float | None = Field(default=None, ge=0)
    properties: dict[str, str] = Field(
        default_factory=dict,
        description="Every recorded property (JUnit XML carries them as <property>).",
    )
    warnings: tuple[WarningNote, ...] = ()


class Cause(_Model):
    """One root cause: what is wrong, its fix, what it blames and the items it explains."""

    rule: str = Field(description="The diagnosis rule (docs/diagnosis.md).")
    cause: str
    fix: str
    objects: Ids = Field(description="What it blames (ids); empty: the cluster as a whole.")
    items: tuple[str, ...] = Field(description="The ids of the items it explains.")
    evidence: tuple[str, ...] = ()
    certain: bool = Field(default=True, description="False: a possible cause, not a likely one.")


class Measurement(_Model):
    """One raw figure. Kinds drawn: loopback_gbps, rdma_gbps, tcp_gbps (node sends to peer),
    nccl_busbw_gbytes_s (op, size_bytes), lane_error_rate_per_s (lane, t_s), ber_max, nic_temp_c,
    gpu_temp_c (t_s where a series). Other kinds are kept and compared."""

    kind: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    value: float
    unit: str
    objects: Ids
    node: str | None = None
    peer: str | None = None
    rail: int | None = Field(default=None, ge=0, le=1)
    lane: int | None = Field(default=None, ge=0, le=7)
    t_s: float | None = Field(default=None, ge=0)
    size_bytes: int | None = Field(default=None, ge=0)
    op: str | None = None
    flagged: bool = False


class CableEnd(_Model):
    """One end of a cable: a node's QSFP port or a switch leg (`node` None), as read there."""

    node: str | None
    port: int | str
    vendor: str | None = None
    part: str | None = None
    serial: str | None = None
    length_m: float | None = Field(default=None, ge=0)
    type: str | None = None
    lanes: int | None = Field(default=None, ge=1, le=8, description="SerDes lanes in use.")
    speed_mbps: int | None = Field(default=None, ge=0)
    fec: str | None = None


class Cable(_Model):
    """One cable of the plan; `found` is where LLDP saw it run when that differs."""

    id: str = Field(description="Its place in the plan: `spark-1:p0<->spark-2:p1`.")
    a: CableEnd
    b: CableEnd
    found: str | None = Field(
        default=None, description="The cable id as cabled (LLDP), when it is not the plan's."
    )
    worst_ber: float | None = Field(default=None, ge=0)
    status: Status = Field(description="The worst outcome of the checks of the cable itself.")
    notes: tuple[str, ...] = ()

    @property
    def serial(self) -> str | None:
        return self.a.serial or self.b.serial


class PreflightGap(_Model):
    """One prerequisite a node lacks, as the checks that need it report it."""

    prerequisite: str = Field(description="What is missing (`perftest`, `sudo ethtool -m`).")
    reason: str = Field(description="What the node said, in the not-measured wording.")
    fix: str = Field(description="The command that installs or allows it.")
    needed_for: str = Field(description="The need it breaks (a command, `nccl.launcher`, ...).")
    advisory: bool = Field(
        default=False, description="Only advisory checks need it: a warning, not INCOMPLETE."
    )


class PreflightNode(_Model):
    """One node's preflight: what the selected checks need there, found and missing."""

    node: str
    looked_for: tuple[str, ...] = ()
    found: dict[str, str] = Field(default_factory=dict, description="Command -> its path.")
    missing: tuple[PreflightGap, ...] = ()
    versions: dict[str, str] = Field(
        default_factory=dict, description="Package -> installed version (dpkg), where one is."
    )
    error: str | None = Field(default=None, description="Why the node could not be checked.")


class Phase(_Model):
    name: str
    rounds: int | None = None
    real_s: float | None = Field(default=None, ge=0)
    transport_s: float | None = Field(
        default=None, ge=0, description="Seconds on the transport's clock (virtual on sim)."
    )


class Threshold(_Model):
    value: float
    kind: Literal["min", "max"]
    unit: str
    source: str


class Counts(_Model):
    passed: int = 0
    warned: int = 0
    failed: int = 0
    not_measured: int = 0

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> Counts:
        seen = list(outcomes)
        return cls(**{o: seen.count(o) for o in ("passed", "warned", "failed", "not_measured")})

    @property
    def total(self) -> int:
        return self.passed + self.warned + self.failed + self.not_measured


def verdict_of(counts: Counts, *, interrupted: bool = False) -> Verdict:
    """Rejected when a check failed; else incomplete when one could not measure, the run was
    cut short, or nothing passed at all (never accepted by omission); else accepted."""
    if counts.failed:
        return "rejected"
    if counts.not_measured or interrupted or not (counts.passed + counts.warned):
        return "incomplete"
    return "accepted"


class Results(_Model):
    """What one acceptance run found."""

    version: Literal[2] = VERSION
    verdict: Verdict
    interrupted: bool = Field(default=False, description="The run was cut short (^C, SIGTERM).")
    cluster: ClusterInfo
    started: datetime
    duration_s: float = Field(ge=0)
    causes: tuple[Cause, ...] = Field(description="Root causes, most items explained first.")
    items: tuple[Item, ...]
    measurements: tuple[Measurement, ...] = ()
    cables: tuple[Cable, ...] = ()
    phases: tuple[Phase, ...] = ()
    preflight: tuple[PreflightNode, ...] = Field(
        default=(), description="What each node has of what the selected checks run."
    )
    thresholds: dict[str, Threshold] = Field(default_factory=dict)
    safety: tuple[str, ...] = Field(
        default=(), description="How the run was less safe than by default (switch.allow_http)."
    )

    @property
    def counts(self) -> Counts:
        return Counts.of(i.outcome for i in self.items)

    def warnings(self) -> list[tuple[Item, WarningNote]]:
        return [(i, w) for i in self.items for w in i.warnings]


class ResultsError(Exception):
    """A results document that cannot be read or is not one; the message says which and why."""


def read(path: Path | str) -> Results:
    """A results document from a file, or ResultsError: missing, too large, not JSON, nested too
    deeply, of another version, or not a results document (the first problems, by field)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_BYTES:
            raise ResultsError(f"{path}: {size} bytes, more than a results document holds")
        data = f.read(MAX_BYTES + 1)
    try:
        return Results.model_validate_json(data)
    except ValidationError as exc:
        raise ResultsError(_explain(str(path), exc)) from None


def _explain(name: str, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    if errors[0]["type"] == "json_invalid":
        return f"{name}: not JSON ({errors[0]['msg'].removeprefix('Invalid JSON: ')})"
    if any(e["loc"] == ("version",) for e in errors):
        return (
            f"{name}: a results document of another version (this sparkfabric reads version "
            f"{VERSION}); render or compare it with the sparkfabric that wrote it"
        )
    shown = "".join(
        f"\n  {'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in errors[:5]
    )
    more = f"\n  ... and {len(errors) - 5} more" if len(errors) > 5 else ""
    fix = "give a file written by pytest --sparkfabric-json PATH (its schema: sparkfabric schema"
    return f"{name}: not a sparkfabric results document:{shown}{more}\n  Fix: {fix} --results)"
