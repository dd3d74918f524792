"""The kernel-log reader beyond its golden samples (tests/data/kernel-log: the kernel's wording
line by line, journalctl's form, both readers refused): the window of a session."""

from __future__ import annotations

from pytest_sparkfabric.probes.dmesg import parse_kernel_log

from .golden import sample


def test_since_keeps_the_events_of_the_window() -> None:
    # The sample's events are pinned by its golden file: two mlx5 link downs, no ixgbe link up.
    log = parse_kernel_log(
        sample("kernel-log/dmesg-tail-cx-mlx5-link-down-two-ports-mixed-noise-lkml.txt")
    )
    assert [e.time_s for e in log.since(18866.0) if e.kind == "link_down"] == [18866.05799]
