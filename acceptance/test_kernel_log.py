"""The kernel log over the session (DOMAIN.md "Kernel log"): what the NIC's driver and the PCIe
core said while the suite ran, read once per node at the end (measure/kernel_log.py).

Fails on an mlx5 "Link down" of a fabric netdev (the link dropped while the suite ran, even if
it came back before any counter was read) and on an uncorrected AER error of the NIC's PCI
functions; corrected AER errors and mlx5 thermal warnings are warnings. A log the suite's user
may not read is a warning with the fix, never a failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric import objects
from pytest_sparkfabric.measure import kernel_log

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Verdict
    from pytest_sparkfabric.probes.dmesg import KernelEvent

SHOWN = 3


def _quote(w: kernel_log.SessionLog, found: list[KernelEvent]) -> str:
    said = "; ".join(f"{w.offset(e)}: `{e.line}`" for e in found[:SHOWN])
    return said + (f" (+{len(found) - SHOWN} more)" if len(found) > SHOWN else "")


@pytest.mark.links
def test_kernel_log(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """No mlx5 link down on a fabric netdev and no uncorrected AER error of the NIC in the
    session's kernel log; corrected AER errors and thermal warnings are warned."""
    verdict(
        node=node.name,
        expected="no mlx5 Link down on a fabric netdev, no uncorrected AER of the NIC, "
        "in the session's kernel log",
    )
    got = kernel_log.session_log(fabric, node.name).require()
    if got.value is None:
        verdict.warn(f"{node.name}: kernel log not read: {got.error}", None)
        return
    w = got.value
    if w.log.refused:
        verdict(measured="not readable")
        verdict.warn(
            f"{node.name}: the kernel log is not readable ({w.log.refused}): link flaps, AER "
            f"and thermal warnings of this run are not judged. Fix: {kernel_log.READ_FIX}"
        )
        return
    rails = {r.netdev: r for r in node.rails}
    functions = {r.pci for r in node.rails}
    mine = [e for e in w.events if e.netdev in rails or e.pci in functions]
    downs = [e for e in mine if e.kind == "link_down" and e.netdev in rails]
    aer = [e for e in mine if e.kind == "aer" and e.pci in functions]
    hard = [e for e in aer if e.severity != "corrected"]
    hot = [e for e in mine if e.kind == "thermal"]
    verdict(
        measured=f"{len(downs)} link down, {len(aer)} AER ({len(hard)} uncorrected), "
        f"{len(hot)} thermal in the last {w.session_s:.0f} s ({w.log.source})",
    )
    if len(aer) > len(hard):
        soft = [e for e in aer if e.severity == "corrected"]
        verdict.warn(f"{node.name}: corrected PCIe AER errors of the NIC: {_quote(w, soft)}")
    if hot:
        verdict.warn(f"{node.name}: NIC thermal warning: {_quote(w, hot)}", "nic_overheated")
    if downs:
        flapped = [rails[n] for n in dict.fromkeys(e.netdev for e in downs if e.netdev)]
        verdict.fail(
            f"{node.name}: the link dropped during the run (kernel log): {_quote(w, downs)}"
            + (f"; also uncorrected AER: {_quote(w, hard)}" if hard else ""),
            "link_down",
            objects=[objects.rail(r) for r in flapped],
        )
    if hard:
        verdict.fail(
            f"{node.name}: uncorrected PCIe AER errors of the NIC (kernel log): {_quote(w, hard)}",
            "pcie_aer",
            objects=[objects.node(node.name)],
        )
