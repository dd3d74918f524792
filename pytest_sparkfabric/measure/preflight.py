"""The preflight: one script per node looks for every tool the selected checks need there; what
is missing makes exactly those checks not measured (prereq.py's wording). Needs, from the marker
`sparkfabric_needs(...)`: commands (`a|b`: either), `nccl.launcher` (launcher, binary, libnccl),
`soak.gpu_load`, `sudo ethtool -m`; `lldpctl` also needs lldpd's socket. ADVISORY: warn only."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_sparkfabric import shell
from pytest_sparkfabric.measure.engine import QUICK_S, PhaseName, parsed
from pytest_sparkfabric.measure.nccl_run import LIBNCCL, library_patterns
from pytest_sparkfabric.measure.prereq import (
    SUDO_ETHTOOL_FIX,
    could_not_run,
    lacking,
    prereq_of,
    tool_missing,
)
from pytest_sparkfabric.outcome import Measured, NotMeasured
from pytest_sparkfabric.probes import toolscan
from pytest_sparkfabric.transport import Job, RunResult

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.results import PreflightNode

NAME: PhaseName = "preflight"
MARKER = "sparkfabric_needs"
NCCL = "nccl.launcher"
GPU_LOAD = "soak.gpu_load"
SUDO_EEPROM = "sudo ethtool -m"
LLDPD_SOCKET = "/run/lldpd.socket"
ADVISORY = frozenset({SUDO_EEPROM, "lldpctl"})
"""What only advisory checks need: its absence is a warning there, never "not measured"."""


@dataclass(frozen=True, slots=True)
class Gap:
    """One thing missing on one node: the need it breaks and why, as an item would say it."""

    need: str
    why: NotMeasured

    @property
    def advisory(self) -> bool:
        return self.need in ADVISORY


@dataclass(frozen=True, slots=True)
class NodeCheck:
    node: str
    looked_for: toolscan.Lookups
    found: Measured[toolscan.Found]
    gaps: tuple[Gap, ...]


@dataclass(frozen=True, slots=True)
class Preflight:
    """By node: what was looked for, what was found, what is missing."""

    nodes: Mapping[str, NodeCheck]

    def blocking(self, needs: Iterable[str], nodes: Iterable[str]) -> NotMeasured | None:
        """Why a check with these needs on these nodes cannot measure (its first missing
        prerequisite, on every one of the nodes that lacks it), or None."""
        checks = [self.nodes[n] for n in dict.fromkeys(nodes) if n in self.nodes]
        for need in (n for n in dict.fromkeys(needs) if n not in ADVISORY):
            if hits := [g.why for c in checks for g in c.gaps if g.need == need]:
                same = [w for w in hits if w.missing == hits[0].missing]
                return NotMeasured(
                    "; ".join(dict.fromkeys(w.reason for w in same)),
                    nodes=list(dict.fromkeys(n for w in same for n in w.nodes)),
                    missing=hits[0].missing,
                    fix=hits[0].fix,
                )
        return None

    @property
    def missing(self) -> bool:
        return any(c.gaps for c in self.nodes.values())


def _tools(cluster: Cluster, need: str) -> tuple[str, ...]:
    if need == NCCL:
        launcher = shell.program(cluster.spec.nccl.launcher)
        return (*((launcher,) if launcher else ()), cluster.spec.nccl.binary)
    if need == GPU_LOAD:
        return tuple(p for p in (shell.program(cluster.spec.soak.gpu_load),) if p)
    return () if need == SUDO_EEPROM else tuple(need.split("|"))


def lookups(cluster: Cluster, node: str, needs: Iterable[str]) -> toolscan.Lookups:
    """What to look for on `node` for checks with these needs."""
    needs = list(dict.fromkeys(needs))
    tools = dict.fromkeys(t for need in needs for t in _tools(cluster, need))
    n = cluster.node(node)
    sudo = [("ethtool", "-m", n.rail(p, 0).netdev) for p in n.ports] if SUDO_EEPROM in needs else []
    return toolscan.Lookups(
        tools=tuple(tools),
        sudo=tuple(sudo),
        sockets=(LLDPD_SOCKET,) if "lldpctl" in needs else (),
        libs={LIBNCCL: library_patterns(cluster)} if NCCL in needs else {},
    )


def gaps(
    cluster: Cluster, node: str, needs: Iterable[str], found: toolscan.Found
) -> tuple[Gap, ...]:
    """What `found` lacks for each need, in the order of the needs."""
    out: list[Gap] = []
    for need in dict.fromkeys(needs):
        tools = _tools(cluster, need)
        if need in (NCCL, GPU_LOAD):
            out += [Gap(need, tool_missing(node, t)) for t in tools if not found.tools.get(t)]
        elif tools and not any(found.tools.get(t) for t in tools):
            out.append(Gap(need, tool_missing(node, tools[0])))
        refused = [(w, a) for w, a in found.sudo.items() if not a.allowed]
        if need == NCCL and not found.libs.get(LIBNCCL):
            places = ", ".join(library_patterns(cluster))
            why = f"{LIBNCCL}: not found where the launcher's ranks load it ({places})"
            out.append(Gap(need, lacking(node, prereq_of(LIBNCCL), why)))
        elif need == "lldpctl" and found.tools.get(need) and not found.sockets.get(LLDPD_SOCKET):
            why = f"lldpd is not running (no {LLDPD_SOCKET} for lldpctl to ask)"
            out.append(Gap(need, lacking(node, prereq_of(need), why)))
        elif need == SUDO_EEPROM and refused:
            out.append(Gap(need, _sudo(node, *refused[0])))
    return tuple(out)


def _sudo(node: str, words: str, answer: toolscan.SudoAnswer) -> NotMeasured:
    said = answer.said
    # What the check's own `sudo -n ethtool -m` would have been told: the same wording.
    why = could_not_run(RunResult(node, words, 1, "", f"{said}\n", 0.0))
    if why is not None and why.missing != "ssh":
        return why
    return NotMeasured(
        f"{node}: `sudo -n {words}` is not allowed: {said or 'sudo -l refused it'}",
        nodes=[node],
        missing=f"sudo {' '.join(words.split()[:2])}",
        fix=SUDO_ETHTOOL_FIX,
    )


def measure(fabric: Fabric, *, needs: Sequence[str] = ()) -> Preflight:
    cluster = fabric.cluster
    names = [n.name for n in cluster.nodes]
    looks = {n: lookups(cluster, n, needs) for n in names}
    results = fabric.run_all([Job(n, toolscan.build_preflight(looks[n]), QUICK_S) for n in names])
    nodes: dict[str, NodeCheck] = {}
    for n, r in zip(names, results, strict=True):
        found = parsed(r, "preflight", toolscan.parse_preflight)
        missing = gaps(cluster, n, needs, found.value) if found.value is not None else ()
        nodes[n] = NodeCheck(n, looks[n], found, missing)
    short = [c.node for c in nodes.values() if any(not g.advisory for g in c.gaps)]
    if short:
        fabric.progress(
            f"preflight: prerequisites missing on {', '.join(short)}; the checks that need "
            "them are not measured (sparkfabric preflight CLUSTER.yaml lists the fixes)"
        )
    return Preflight(nodes)


def preflight(fabric: Fabric, needs: Callable[[], Iterable[str]]) -> Preflight:
    """The session's preflight; `needs` (what every selected check needs) is asked once."""
    return fabric.phase(NAME, lambda f: measure(f, needs=tuple(dict.fromkeys(needs()))))


def document(fabric: Fabric) -> tuple[PreflightNode, ...]:
    """The preflight as the results document holds it (empty: it did not run)."""
    from pytest_sparkfabric.results import PreflightGap, PreflightNode

    checked = fabric.measured(NAME, Preflight)
    out = []
    for c in checked.nodes.values() if checked is not None else ():
        look, found = c.looked_for, c.found.value
        missing = tuple(
            PreflightGap(
                prerequisite=g.why.missing or "",
                reason=g.why.reason,
                fix=g.why.fix or "",
                needed_for=g.need,
                advisory=g.advisory,
            )
            for g in c.gaps
        )
        out.append(
            PreflightNode(
                node=c.node,
                looked_for=(
                    *look.tools,
                    *(" ".join(w) for w in look.sudo),
                    *look.sockets,
                    *look.libs,
                ),
                found={k: v for k, v in found.tools.items() if v} if found else {},
                missing=missing,
                versions=dict(found.versions) if found else {},
                error=c.found.error,
            )
        )
    return tuple(out)
