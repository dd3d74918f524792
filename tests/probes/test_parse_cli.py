"""`sparkfabric parse TOOL FILE` on real text: the JSON of the golden files, and each variant
issue 14 names (tests with the real samples of tests/data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric.cli import main

from . import golden

SAMPLES = golden.raw_samples()


def _parse(tool: str, path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(["parse", tool, str(path)])
    out, err = capsys.readouterr()
    return rc, out, err


def _json(tool: str, relative: str, capsys: pytest.CaptureFixture[str]) -> Any:
    rc, out, err = _parse(tool, golden.DATA / relative, capsys)
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize("raw", SAMPLES, ids=golden.sample_id)
def test_cli_prints_the_golden_json(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tool = golden.folder_tool(raw.parent.name)
    rc, out, err = _parse(tool, raw, capsys)
    expected = golden.expected_path(raw).read_text(encoding="utf-8")
    data = json.loads(expected)
    error = data.get("parse_error") if isinstance(data, dict) else None
    if error is None:
        assert (rc, out, err) == (0, expected, "")
    else:
        assert rc == 2 and out == ""
        assert err.startswith(f"sparkfabric parse: {raw} is not {tool} output: {error['tool']}: ")
        assert error["missing"] in err and (error["found"] or "") in err


def test_cli_reads_stdin_bytes_untouched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = golden.DATA / "iperf3/gke-iperf3.6-ctrlc-crlf-interrupt-error-partial-end.json"

    class _Stdin:
        buffer = raw.open("rb")

    monkeypatch.setattr("sys.stdin", _Stdin)
    assert main(["parse", "iperf3", "-"]) == 0
    assert capsys.readouterr().out == golden.expected_path(raw).read_text(encoding="utf-8")


# ---------------------------------------------------------------- perftest


def test_perftest_cpu_util_column(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(
        "ib_write_bw", "perftest/gb10-blog-write-bw-D10-cpu_util-gbits-client-masked.txt", capsys
    )
    assert r["columns"][-1] == "CPU_Util[%]"
    assert (r["rows"][0]["bw_avg_gbps"], r["rows"][0]["cpu_util_pct"]) == (92.57, 5.07)
    assert r["rows"][0]["bw_peak_gbps"] == 0.0 and r["rows"][0]["iterations"] == 1059332


def test_perftest_bidirectional_squeezed_duration_row_mb_per_sec(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = _json(
        "ib_write_bw", "perftest/ib-mlx5-send-bw-bidir-D5-server-squeezed-columns.txt", capsys
    )
    assert (r["test"], r["bidirectional"], r["reported_unit"]) == (
        "Send Bidirectional",
        True,
        "MB/sec",
    )
    assert r["rows"][0]["iterations"] == 8758300
    assert r["bw_avg_gbps"] == pytest.approx(11403.46 * 2**20 * 8 / 1e9)


def test_perftest_run_infinitely_rows(capsys: pytest.CaptureFixture[str]) -> None:
    name = "perftest/ib_write_bw-gb10-nvidia-playbook-client1-run-infinitely-92.57.txt"
    r = _json("ib_write_bw", name, capsys)
    assert r["run_infinitely"] is True and len(r["rows"]) == 5


def test_perftest_error_path_quotes_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    path = golden.DATA / "perftest/roce-couldnt-connect-old-merged-error-line.txt"
    rc, _out, err = _parse("ib_write_bw", path, capsys)
    assert rc == 2
    assert "no result table" in err and "Couldn't connect to 192.168.125.211:18515" in err


# ---------------------------------------------------------------- nccl-tests


def test_nccl_tag_output_prefix_and_socket_fallback(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(
        "nccl-tests", "nccl-tests/aws-eks-mpijob-tag-output-socket-fallback-elided.txt", capsys
    )
    assert r["avg_busbw_gbytes_s"] == 0.733914 and len(r["rows"]) == 31
    assert [n["network"] for n in r["networks"]] == ["Socket"]


def test_nccl_old_all_gather_columns_without_redop(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json("nccl-tests", "nccl-tests/a100x8-superbench-all_gather-old-format-noise.txt", capsys)
    assert r["columns"][:4] == ["size", "count", "type", "time"]
    assert r["rows"][-1]["redop"] is None and r["rows"][-1]["ip_busbw_gbytes_s"] == 230.07
    assert r["avg_busbw_gbytes_s"] == 58.2651


def test_nccl_incomplete_run_keeps_the_failure(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json("nccl-tests", "nccl-tests/a6000-2node-internal-error-no-table.txt", capsys)
    assert r["completed"] is False and r["rows"] == []
    assert "Test NCCL failure common.cu:959" in r["error_lines"][0]


def test_nccl_gb10_noise_and_trailing_spaces(capsys: pytest.CaptureFixture[str]) -> None:
    name = "nccl-tests/gb10-spark-2node-switch-all_gather-1G-4G-21.4-x11-noise.txt"
    r = _json("nccl-tests", name, capsys)
    assert r["avg_busbw_gbytes_s"] == 21.4033
    assert [row["ip_busbw_gbytes_s"] for row in r["rows"]] == [20.80, 22.05, 22.46]


# ---------------------------------------------------------------- nvidia-smi


def test_nvidia_smi_any_field_list_with_units_and_deprecated_notes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = _json("nvidia-smi", "nvidia-smi/h100-590.48-idle-query-gpu-all-fields-csv.txt", capsys)
    (record,) = r["records"]
    assert len(record) == 212
    assert (record["memory.total"], record["utilization.gpu"], record["power.draw"]) == (
        81559,
        0,
        69.85,
    )
    table = r["tables"][0]
    units = {c["name"]: c["unit"] for c in table["columns"]}
    assert units["memory.total"] == "MiB" and units["temperature.gpu"] is None
    notes = {c["note"] for c in table["rows"][0] if c["note"]}
    assert {"N/A", "Requested functionality has been deprecated"} <= notes


def test_nvidia_smi_gb10_na_is_none_never_zero(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(
        "nvidia-smi", "nvidia-smi/gb10-memused-memtotal-utilmem-noheader-nounits-NA.txt", capsys
    )
    assert r["records"] == [{"1": None, "2": None, "3": 0}]
    header = _json(
        "nvidia-smi", "nvidia-smi/gb10-index-name-memtotal-memfree-csv-header-NA.txt", capsys
    )
    assert header["records"] == [
        {"index": 0, "name": "NVIDIA GB10", "memory.total": None, "memory.free": None}
    ]


def test_nvidia_smi_repeated_headers_from_four_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    name = "nvidia-smi/gb10-spark-4node-srun-name-memtotal-memfree-csv-NA.txt"
    r = _json("nvidia-smi", name, capsys)
    assert len(r["tables"]) == 1 and len(r["records"]) == 4


# ---------------------------------------------------------------- ping


def test_ping_old_iputils_router_frag_needed_is_a_path_mtu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = "ping/blog-old-iputils-frag-needed-router-mtu1500-0-transmitted-plus1-errors.txt"
    r = _json("ping", name, capsys)
    assert (r["verdict"], r["path_mtu"], r["path_mtu_from"]) == ("path_mtu", 1500, "87.198.114.189")
    assert (r["transmitted"], r["received"], r["errors"], r["loss_pct"]) == (0, 0, 1, None)


def test_ping_local_message_too_long_either_case(capsys: pytest.CaptureFixture[str]) -> None:
    lower = _json(
        "ping", "ping/jumbo-misconfig-local-error-message-too-long-mtu1500-ctrlc.txt", capsys
    )
    upper = _json(
        "ping", "ping/proxmox-multipath-frag-needed-1406-then-local-errors-ctrlc.txt", capsys
    )
    assert (lower["verdict"], lower["local_mtu_error"]) == ("local_mtu", 1500)
    # The router answered first; the local errors are the kernel's cache of that answer.
    assert (upper["verdict"], upper["path_mtu"], upper["local_mtu_error"]) == (
        "path_mtu",
        1406,
        1406,
    )


def test_ping_modern_router_frag_needed_from_a_real_kernel(
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = "ping/host-iputils20221126-netns-router-frag-needed-mtu1400-w-deadline-stops-after-1.txt"
    r = _json("ping", name, capsys)
    assert (r["verdict"], r["path_mtu"], r["errors"], r["loss_pct"]) == ("path_mtu", 1400, 1, 100.0)


def test_ping_french_locale(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json("ping", "ping/fr-locale-partial-translation-masscanned-rst-indented.txt", capsys)
    assert (r["verdict"], r["transmitted"], r["received"], r["rtt_avg_ms"]) == ("ok", 1, 1, 0.442)


# ---------------------------------------------------------------- ethtool, iperf3


def test_ethtool_stats_trailing_comments(capsys: pytest.CaptureFixture[str]) -> None:
    name = "ethtool-stats/mlx5-100g-S-annotated-trailing-zh-comments-lane3-errors.txt"
    r = _json("ethtool-stats", name, capsys)
    assert r["counters"]["rx_crc_errors_phy"] == 386
    assert r["phy"]["lane_errors"] == {"0": 28116, "1": 0, "2": 0, "3": 17722623}
    assert r["phy"]["bits"] is None and r["phy"]["tx_pause"] == 2


def test_iperf3_ctrl_c_crlf_error_beside_end(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json("iperf3", "iperf3/gke-iperf3.6-ctrlc-crlf-interrupt-error-partial-end.json", capsys)
    assert r["error"] == "interrupt - the client has terminated" and r["ok"] is False
    assert r["received_gbps"] == 0.0


def test_iperf3_truncated_says_where(capsys: pytest.CaptureFixture[str]) -> None:
    path = golden.DATA / "iperf3/gke-iperf3.9-reverse-R-truncated-at-8192-bytes.json"
    rc, _out, err = _parse("iperf3", path, capsys)
    assert rc == 2
    assert "expected a complete JSON report; it breaks off at line 351" in err
    assert "1.0000530481338" in err


# ---------------------------------------------------------------- new parsers


def test_mlnx_qos_pfc_and_trust(capsys: pytest.CaptureFixture[str]) -> None:
    name = "mlnx_qos/cx-mce0-firmware-dcbx-dscp-pfc3-ets-vendor-tc6.txt"
    r = _json("mlnx_qos", name, capsys)
    assert (r["trust"], r["pfc_priorities"], r["dcbx_mode"]) == ("dscp", [3], "Firmware controlled")
    elided = _json(
        "mlnx_qos", "mlnx_qos/mlx5-rdma0-os-dcbx-dscp2prio-tab-author-elided.txt", capsys
    )
    assert elided["pfc_enabled"] is None and elided["pfc_priorities"] is None


def test_hw_counters_rdma_statistic_wrapped(capsys: pytest.CaptureFixture[str]) -> None:
    name = "hw-counters/iproute2-rdma-stat-show-mlx5_0-mail-wrapped-72-cols.txt"
    (port,) = _json("hw-counters", name, capsys)["ports"]
    assert (port["device"], port["port"], len(port["counters"])) == ("mlx5_0", 1, 21)
    assert port["counters"]["out_of_buffer"] == 0 and "out_of_sequence" not in port["counters"]


def test_lldpctl_neighbor_mac_and_port(capsys: pytest.CaptureFixture[str]) -> None:
    name = "lldpctl/alpine-lldpctl-mikrotik-hap-ac2-6.49.15-two-mgmtip.txt"
    (n,) = _json("lldpctl", name, capsys)["neighbors"]
    assert (n["local_port"], n["neighbor_mac"], n["port_name"]) == (
        "eth0",
        "d4:01:c3:2f:cc:2e",
        "ether2",
    )


def test_gpu_burn_abort_and_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json("gpu-burn", "gpu-burn/8gpu-died-no-clients-alive-aborting.txt", capsys)
    assert (r["aborted"], r["died"], r["all_ok"]) == (True, True, False)
    assert r["last_line"] == "No clients are alive!  Aborting"
