"""The kernel-log reader on the wording the kernel prints (each literal names its source)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.dmesg import classify, parse_kernel_log

from .golden import sample


def test_since_keeps_the_events_of_the_window() -> None:
    # The sample's events are pinned by its golden file: two mlx5 link downs, no ixgbe link up.
    log = parse_kernel_log(
        sample("kernel-log/dmesg-tail-cx-mlx5-link-down-two-ports-mixed-noise-lkml.txt")
    )
    assert [e.time_s for e in log.since(18866.0) if e.kind == "link_down"] == [18866.05799]


@pytest.mark.parametrize(
    ("text", "kind", "severity", "pci"),
    [
        # en_main.c mlx5e_update_carrier(): netdev_info(priv->netdev, "Link up\n")
        ("mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link up", "link_up", None, "0002:01:00.1"),
        # aer.c (older): pci_info(rpdev, "AER: %s%s error received: %s\n", ...)
        (
            "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
            "aer",
            "corrected",
            "0000:01:00.0",
        ),
        # aer.c (newer): "AER: %s%s error message received from %s\n", the severity renamed
        (
            "pcieport 0000:00:1c.0: AER: Multiple Uncorrectable (Non-Fatal) error message "
            "received from 0000:73:00.1",
            "aer",
            "uncorrected",
            "0000:73:00.1",
        ),
        # aer.c aer_print_error(): "PCIe Bus Error: severity=%s, type=%s, (%s)\n"
        (
            "mlx5_core 0000:01:00.1: PCIe Bus Error: severity=Uncorrected (Fatal), "
            "type=Transaction Layer, (Requester ID)",
            "aer",
            "fatal",
            "0000:01:00.1",
        ),
        (
            "mlx5_core 0000:01:00.0: AER: PCIe Bus Error: severity=Correctable, "
            "type=Physical Layer, (Receiver ID)",
            "aer",
            "corrected",
            "0000:01:00.0",
        ),
        # mlx5/core/events.c temp_warn(): mlx5_core_warn(..., "High temperature on sensors
        # with bit set %llx %llx"), with mlx5_core_warn's func:line:(pid) prefix
        (
            "mlx5_core 0000:41:00.1: temp_warn:170:(pid 0): High temperature on sensors with "
            "bit set 0 1",
            "thermal",
            None,
            "0000:41:00.1",
        ),
        # events.c mlx5_pme_error: a module too hot
        (
            "mlx5_core 0000:01:00.0: Port module event[error]: module 0, Cable error, High "
            "Temperature",
            "thermal",
            None,
            "0000:01:00.0",
        ),
        # A healthy Spark at boot (events.c mlx5_pcie_event): noise (DOMAIN.md §4)
        (
            "mlx5_core 0000:01:00.0: mlx5_pcie_event:326:(pid 12): Detected insufficient power "
            "on the PCIe slot (27W).",
            "other",
            None,
            "0000:01:00.0",
        ),
        (
            "ixgbe 0000:05:00.0 enp5s0: NIC Link is Up 10 Gbps, Flow Control: RX/TX",
            "other",
            None,
            "0000:05:00.0",
        ),
    ],
)
def test_kernel_wording(text: str, kind: str, severity: str | None, pci: str) -> None:
    e = classify(1.0, text)
    assert (e.kind, e.severity, e.pci) == (kind, severity, pci)


def test_journalctl_short_monotonic_reads_as_dmesg() -> None:
    text = (
        "53012.41 104000.00\n"
        "dmesg: read kernel buffer failed: Operation not permitted\n"
        "[52990.104512] spark-2 kernel: mlx5_core 0000:01:00.1 enp1s0f1np1: Link down\n"
        "[52990.604513] spark-2 kernel: mlx5_core 0000:01:00.1 enp1s0f1np1: Link up\n"
    )
    log = parse_kernel_log(text)
    assert log.source == "journalctl" and log.uptime_s == 53012.41
    assert [(e.kind, e.netdev) for e in log.events] == [
        ("link_down", "enp1s0f1np1"),
        ("link_up", "enp1s0f1np1"),
    ]


def test_both_refused_is_said_in_the_tools_words() -> None:
    # util-linux dmesg: err(..., "read kernel buffer failed"); systemd journal-util.c hints
    text = (
        "812.33 1600.10\n"
        "dmesg: read kernel buffer failed: Operation not permitted\n"
        "Hint: You are currently not seeing messages from other users and the system.\n"
        "      Users in groups 'adm', 'systemd-journal' can see all messages.\n"
        "      Pass -q to turn off this notice.\n"
        "-- No entries --\n"
    )
    log = parse_kernel_log(text)
    assert log.source is None and log.events == ()
    assert log.refused == (
        "dmesg: read kernel buffer failed: Operation not permitted; Hint: You are currently "
        "not seeing messages from other users and the system."
    )


def test_text_without_a_log_line_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="no '\\[seconds\\] message' line"):
        parse_kernel_log("bash: cat: command not found\n")
