"""`sparkfabric explain`: the session's diagnosis rules applied to saved tool outputs, each file
recognised by its content, summarised against DOMAIN.md §5 and folded into one `Evidence`.
Several ib_write_bw or iperf3 files are flows that ran at once; an ib_write_bw whose local and
remote addresses are the same is a loopback."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pytest_sparkfabric.diagnosis.diagnose import diagnose
from pytest_sparkfabric.diagnosis.evidence import Evidence, Finding, NcclEvidence, PairRates, Rate
from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.nccl import NcclTestsRun, parse_nccl_tests
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from pytest_sparkfabric.probes.routeros import parse_system_resource

Tool = Literal["ib_write_bw", "iperf3", "nccl-tests", "routeros-resource"]

_ADDRESS = re.compile(r"^\s*(local|remote) address:\s*LID\s+(\S+)")
_GID = re.compile(r"^\s*GID:\s*(\S+)")
_NCCL = re.compile(r"(#\s*Avg bus bandwidth|#\s*size\s+count\s+type|NCCL INFO|nccl-tests version)")
_PERFTEST = re.compile(r"(#bytes\s+#iterations|RDMA_Write BW Test|ib_write_bw)")
UNRECOGNISED = (
    "not an output of ib_write_bw, iperf3 -J, nccl-tests or RouterOS /system resource print"
)


def detect(text: str) -> Tool | None:
    if text.lstrip().startswith("{") and any(k in text for k in ('"start"', '"end"', '"error"')):
        return "iperf3"
    if _NCCL.search(text):
        return "nccl-tests"
    if _PERFTEST.search(text):
        return "ib_write_bw"
    return "routeros-resource" if re.search(r"^\s*cpu-load\s*:", text, re.MULTILINE) else None


def is_loopback(text: str) -> bool:
    """Local and remote QP addresses name the same port (LID and GID): one box, no cable."""
    ends: dict[str, set[tuple[str, str]]] = {"local": set(), "remote": set()}
    last: tuple[str, str] | None = None
    for line in text.splitlines():
        if m := _ADDRESS.match(line):
            last = (m.group(1), m.group(2))
            ends[last[0]].add((last[1], ""))
        elif (g := _GID.match(line)) and last is not None:
            ends[last[0]].discard((last[1], ""))
            ends[last[0]].add((last[1], g.group(1)))
            last = None
    # RoCE prints LID 0000 for every QP: only a GID (or a real IB LID) names the port.
    local, remote = ({e for e in ends[k] if e[1] or int(e[0], 16) != 0} for k in ends)
    return bool(local) and local == remote


@dataclass
class Explained:
    lines: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _nccl_evidence(name: str, run: NcclTestsRun) -> NcclEvidence:
    devices: dict[str, tuple[str, ...]] = {}
    for t in run.transports:
        if t.net == "IB" and t.devices:
            label = f"{t.host or '?'}:{t.pid}" if t.pid is not None else (t.host or name)
            devices[label] = tuple(dict.fromkeys([*devices.get(label, ()), *t.devices]))
    return NcclEvidence(
        where=name,
        completed=run.completed,
        busbw_gbytes_s=run.avg_busbw_gbytes_s,
        networks=tuple(sorted({c.network for c in run.networks})),
        socket=any(t.net == "Socket" or t.no_device for t in run.transports),
        devices=devices,
    )


def _keep(out: Explained, name: str, line: str, value: float | None) -> bool:
    """Record the file's summary line, unless its figure is not a number to judge: a saved
    output that says nan or inf Gb/s is damaged, not a measurement."""
    if value is not None and not math.isfinite(value):
        out.errors.append(f"{name}: holds a figure that is not a finite number (nan or inf)")
        return False
    out.lines.append(line)
    return True


def explain(files: Sequence[tuple[str, str]]) -> Explained:
    """(name, text) of each saved output -> per-file summaries and the findings of them all."""
    out = Explained()
    loopback: list[Rate] = []
    rdma: list[Rate] = []
    tcp: list[Rate] = []
    nccl: NcclEvidence | None = None
    cpu: float | None = None
    for name, text in files:
        tool = detect(text)
        if tool is None:
            out.errors.append(f"{name}: {UNRECOGNISED}")
            continue
        try:
            if tool == "ib_write_bw":
                bw = parse_ib_write_bw(text)
                gbps, label, loop = bw.bw_avg_gbps, bw.device or name, is_loopback(text)
                if loop:
                    what, ref = f"loopback on {label}", "healthy NIC ~106 Gb/s, throttled 8-25"
                else:
                    qps = f", {bw.qps} QP(s)" if bw.qps else ""
                    what, ref = f"on {label}{qps}", "one rail healthy 92-112, NVIDIA gate 80"
                line = f"{name}: ib_write_bw {what}: {gbps:.1f} Gb/s ({ref})"
                if _keep(out, name, line, gbps):
                    (loopback if loop else rdma).append(Rate(name, (), gbps, label))
            elif tool == "iperf3":
                res = parse_iperf3_json(text)
                if res.error is not None:
                    out.lines.append(f"{name}: iperf3 reported an error: {res.error}")
                    continue
                tcp_gbps = res.received_gbps if res.received_gbps is not None else res.sent_gbps
                streams = f"{res.streams} stream(s)" if res.streams else "? streams"
                shown = f"{tcp_gbps:.1f} Gb/s" if tcp_gbps is not None else "no rate"
                line = f"{name}: iperf3 {streams}: {shown} (both halves in parallel 185-198)"
                if _keep(out, name, line, tcp_gbps):
                    tcp.append(Rate(name, (), tcp_gbps, name))
            elif tool == "nccl-tests":
                run = parse_nccl_tests(text)
                found = _nccl_evidence(name, run)
                busbw = (
                    f"avg busbw {run.avg_busbw_gbytes_s:g} GB/s"
                    if run.avg_busbw_gbytes_s is not None
                    else "NO '# Avg bus bandwidth' line (the run did not complete)"
                )
                nets = ", ".join(found.networks) or "not shown (no NCCL_DEBUG=INFO?)"
                devs = "; ".join(f"{k}: {','.join(v)}" for k, v in found.devices.items())
                line = (
                    f"{name}: nccl-tests, {len(run.ranks) or '?'} ranks: {busbw}; network {nets}"
                    + (f"; NET/IB {devs}" if devs else "")
                )
                nccl = found if _keep(out, name, line, found.busbw_gbytes_s) else None
            else:
                load = parse_system_resource(text).cpu_load_pct
                seen = float(load) if load is not None else None
                line = f"{name}: RouterOS system resource: cpu-load {seen}%"
                cpu = seen if _keep(out, name, line, seen) else None
        except ParseError as exc:
            out.errors.append(f"{name}: looks like {tool}, but {exc.missing}")
    rdma_together = (PairRates("the ib_write_bw files together", (), tuple(rdma)),)
    out.findings = diagnose(
        Evidence(
            loopback=tuple(loopback),
            rdma=tuple(rdma),
            pairs=rdma_together if len(rdma) >= 2 else (),
            tcp=(PairRates("the iperf3 files together", (), tuple(tcp)),) if tcp else (),
            nccl=nccl,
            switch_cpu_load_pct=cpu,
        )
    )
    return out
