"""Real RouterOS outputs (tests/data/routeros-*/, provenance beside them) parse to the JSON
reviewed beside each one, and to the key facts each was chosen for.

The golden layout is tests/data/<tool>/<name>.txt + <name>.expected.json, <tool> being the
`sparkfabric parse` tool; the key-fact tests below say in code what each sample is for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main
from pytest_sparkfabric.probes import PARSERS, to_jsonable
from pytest_sparkfabric.probes.routeros_reads import (
    parse_bridge_ports,
    parse_ethernet,
    parse_ethernet_stats,
    parse_qos_ports,
    parse_routeros_monitor,
    parse_routeros_monitors,
    parse_system_resource,
)

from ._samples import DATA, sample

ROUTEROS_TOOLS = sorted(k for k in PARSERS if k.startswith("routeros-"))
GOLDEN = sorted((tool, p.name) for tool in ROUTEROS_TOOLS for p in (DATA / tool).glob("*.txt"))


def _expected(tool: str, name: str) -> Path:
    return DATA / tool / name.replace(".txt", ".expected.json")


@pytest.mark.parametrize("tool", ROUTEROS_TOOLS)
def test_every_routeros_tool_has_real_samples_and_provenance(tool: str) -> None:
    folder = DATA / tool
    names = [p.name for p in folder.glob("*.txt")]
    assert names, f"no real sample of `sparkfabric parse {tool}` in {folder}"
    provenance = (folder / "PROVENANCE.md").read_text(encoding="utf-8")
    assert all(f"`{n}`" in provenance for n in names)
    assert all(_expected(tool, n).exists() for n in names)


@pytest.mark.parametrize(("tool", "name"), GOLDEN)
def test_golden(tool: str, name: str) -> None:
    got = to_jsonable(PARSERS[tool](sample(f"{tool}/{name}")))
    assert got == json.loads(_expected(tool, name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- monitor


def test_monitor_skips_log_line() -> None:
    r = parse_routeros_monitor(
        sample("routeros-monitor/monitor-once-ether1-log-line-interleaved.txt")
    )
    assert (r.name, r.status, r.rate_gbps, r.full_duplex) == ("ether1", "link-ok", 1.0, True)
    assert r.raw["tx-flow-control"] == "no" and r.raw["rx-flow-control"] == "no"
    assert not any("echo" in k or k[0].isdigit() for k in r.raw)
    assert r.link_ok


def test_monitor_sfp_eeprom_continuation() -> None:
    r = parse_routeros_monitor(sample("routeros-monitor/monitor-once-sfp-sfpplus24-eeprom.txt"))
    assert (r.rate_gbps, r.sfp_tx_power_dbm, r.sfp_rx_power_dbm, r.sfp_temp_c) == (
        10.0,
        -2.843,
        -1.203,
        33.0,
    )
    assert (r.raw["sfp-type"], r.raw["eeprom-checksum"]) == ("SFP-or-SFP+", "good")
    assert r.sfp_vendor_part_number == "S+85DLC03D"
    eeprom = r.raw["eeprom"].split("\n")
    assert len(eeprom) == 16
    assert eeprom[0].startswith("0000: 03 04 07 10") and eeprom[-1].startswith("00f0:")
    assert r.raw["advertising"] == ""


def test_monitor_no_link() -> None:
    r = parse_routeros_monitor(sample("routeros-monitor/monitor-once-ether30-no-link.txt"))
    assert (r.name, r.status, r.rate_gbps, r.full_duplex) == ("ether30", "no-link", None, None)
    assert r.raw["link-partner-advertising"] == ""
    assert not r.link_ok


def test_monitor_misaligned_keys_and_collapsed_eeprom_line() -> None:
    r = parse_routeros_monitor(
        sample("routeros-monitor/manual-monitor-sfp3-misaligned-eeprom-dump.txt")
    )
    assert (r.rate_gbps, r.full_duplex, r.sfp_rx_power_dbm) == (1.0, True, -5.22)
    assert r.raw["link-partner-advertising"] == ""
    assert "\n*\n" in r.raw["eeprom"]


def test_monitor_wrapped_link_mode_list_is_one_list() -> None:
    r = parse_routeros_monitor(
        sample("routeros-monitor/manual-monitor-qsfp28-1-1-supported-advertising-elided.txt")
    )
    modes = r.raw["supported"].split(",")
    assert len(modes) == 21 and "1G-baseX" in modes and modes[-1] == "100G-baseCR4"
    assert r.status is None


def test_monitor_two_interfaces_side_by_side() -> None:
    text = sample("routeros-monitor/gns3-chr-v7-monitor-once-two-interfaces-columns.txt")
    both = parse_routeros_monitors(text)
    assert [(m.name, m.status, m.rate_gbps, m.full_duplex) for m in both] == [
        ("ether2", "link-ok", 10.0, True),
        ("ether3", "link-ok", 10.0, True),
    ]
    with pytest.raises(Exception, match=r"2 interfaces \(ether2, ether3\) where one was asked"):
        parse_routeros_monitor(text)


# ---------------------------------------------------------------- resource


def test_resource_ccr2004() -> None:
    r = parse_system_resource(sample("routeros-resource/system-resource-print-ccr2004-7.12.2.txt"))
    assert (r.version, r.cpu_load_pct, r.board_name) == (
        "7.12.2 (stable)",
        36,
        "CCR2004-1G-12S+2XS",
    )
    assert (r.uptime, r.architecture, r.cpu_count) == ("10w2d6h21m59s", "arm64", 4)
    assert r.free_memory_bytes == int(3704.1 * 2**20)
    assert r.total_memory_bytes == 4032 * 2**20
    assert "cpu-frequency" not in r.raw


def test_resource_chr_leading_tabs() -> None:
    r = parse_system_resource(
        sample("routeros-resource/system-resource-print-chr-leading-tabs.txt")
    )
    assert (r.uptime, r.cpu_load_pct, r.board_name) == ("5w3d20m51s", 53, "CHR")
    assert "bad-blocks" not in r.raw


def test_resource_rest_and_console_agree_on_units() -> None:
    rest = parse_system_resource(
        sample("routeros-resource/rest-manual-ccr1016-system-resource-wrapped.txt")
    )
    assert (rest.cpu_load_pct, rest.free_memory_bytes, rest.cpu_count) == (1, 1503133696, 16)
    cli = parse_system_resource(
        sample("routeros-resource/manual-hap-ax-lite-7.24rc2-system-resource-print.txt")
    )
    assert (cli.cpu_load_pct, cli.board_name, cli.total_memory_bytes) == (
        2,
        "hAP ax lite LTE6",
        224 * 2**20,
    )


# ---------------------------------------------------------------- ethernet


def test_ethernet_v6_table_flags_and_touching_columns() -> None:
    ports = parse_ethernet(
        sample("routeros-ethernet/ntc-v6-interface-ethernet-print-columns-flags-RS-switch.txt")
    )
    assert [(p.name, p.mtu_bytes, p.running, p.disabled) for p in ports] == [
        ("ether1", 1500, False, False),
        ("ether2", 1500, True, False),
        ("ether3", 1500, False, True),
        ("ether4", 1500, False, False),
        ("ether5", 1500, True, False),
    ]


def test_ethernet_v7_table_legend_lists_only_the_flags_in_use() -> None:
    ports = parse_ethernet(
        sample("routeros-ethernet/gns3-chr-v7-ethernet-print-columns-flags-R.txt")
    )
    assert [p.name for p in ports if p.running] == ["ether2", "ether3"]
    assert all(p.disabled is False and p.l2mtu_bytes is None for p in ports)


def test_ethernet_terse_values_with_spaces() -> None:
    v7 = parse_ethernet(
        sample("routeros-ethernet/ntc-v7-interface-print-terse-comment-vrf-iso-dates.txt")
    )
    assert (v7[0].name, v7[0].l2mtu_bytes, v7[0].running) == ("ether1", 1596, True)
    assert (v7[4].name, v7[4].l2mtu_bytes, v7[4].running) == ("sfp-sfpplus1", 1600, False)
    old = parse_ethernet(
        sample("routeros-ethernet/ntc-interface-print-terse-space-in-name-old-dates.txt")
    )
    assert old[2].name == "ether3 UniFi1"
    assert [p.name for p in old if p.disabled] == ["bridge-VLAN2", "eth5_vlan5"]


def test_ethernet_detail_with_wrapped_comment() -> None:
    ports = parse_ethernet(
        sample("routeros-ethernet/ntc-interface-print-detail-multiline-comment.txt")
    )
    assert [p.name for p in ports][-2:] == ["pptp-out1", "pptp-to-AH1100-HS"]
    assert (ports[-2].mtu_bytes, ports[-2].running) == (1450, True)


def test_ethernet_rest_object() -> None:
    (p,) = parse_ethernet(
        sample("routeros-ethernet/rest-tfprov-interface-ethernet-ether1-object.txt")
    )
    assert (p.name, p.mtu_bytes, p.auto_negotiation, p.running, p.disabled) == (
        "ether1",
        1500,
        True,
        True,
        False,
    )


# ---------------------------------------------------------------- bridge ports


def test_bridge_v7_hw_offload_flag() -> None:
    ports = parse_bridge_ports(
        sample("routeros-bridge-port/manual-v7-bridge-port-print-DH-flags-columns-line.txt")
    )
    assert {p.interface: p.hw_offload for p in ports} == {
        "vlan10_untagged": False,
        "ether2": True,
        "ether3": True,
        "vlan20_untagged": False,
        "ether4": True,
        "vlan_tagged": False,
    }
    assert all(p.hw_requested and p.bridge == "bridge1" for p in ports)


def test_bridge_terse_without_flags_is_not_offloaded() -> None:
    ports = parse_bridge_ports(
        sample("routeros-bridge-port/fixture-powerbox-pro-v6-bridge-port-print-terse-hw-no.txt")
    )
    assert len(ports) == 8
    assert all(p.hw_offload is False for p in ports)
    assert [p.hw_requested for p in ports] == [False] * 6 + [None, None]


def test_bridge_hw_column_is_the_request_the_flag_the_fact() -> None:
    ports = parse_bridge_ports(
        sample("routeros-bridge-port/manual-v6style-bridge-port-print-hw-column.txt")
    )
    assert [(p.interface, p.hw_requested, p.hw_offload) for p in ports] == [
        ("ether1", True, False),
        ("ether2", True, False),
    ]


# ---------------------------------------------------------------- QoS


def test_qos_header_row_wins_over_column_line_and_blank_cells() -> None:
    ports = parse_qos_ports(sample("routeros-qos/manual-crs-switch-qos-port-print-27-ports.txt"))
    assert len(ports) == 27
    assert (ports[24].name, ports[24].trust_l3) == ("sfp-sfpplus1", "ignore")
    assert (ports[26].name, ports[26].trust_l3, ports[26].pfc) == ("switch1-cpu", None, None)
    assert all(p.limited_queues() == {} for p in ports)


# ---------------------------------------------------------------- stats


def test_stats_columns_with_thousands_spaces_and_touching_columns() -> None:
    stats = parse_ethernet_stats(
        sample("routeros-stats/manual-hapac2-ethernet-print-stats-5col-thousands-spaces.txt")
    )
    by = {s.name: s for s in stats}
    assert list(by) == ["ether1", "ether2", "ether3", "ether4", "ether5"]
    assert by["ether1"].counters["driver-rx-byte"] == 182_334_805_898
    assert by["ether2"].counters["driver-tx-byte"] == 0
    assert by["ether3"].counters["driver-tx-byte"] == 70_502_669_211
    assert by["ether4"].counters["rx-bytes"] == 1_358_140_795
    assert by["ether5"].counters["driver-tx-byte"] == 53
    assert all((s.rx_fcs_error, s.rx_pause, s.tx_pause) == (0, 0, 0) for s in stats)
    # This hAP has no RS-FEC and no drop counters: absent, not zero.
    assert all(s.rs_fec_corrected is None and s.tx_drop is None for s in stats)


def test_stats_rest_has_drops_where_the_chip_counts_them() -> None:
    (chip,) = parse_ethernet_stats(
        sample("routeros-stats/rest-tfprov-interface-ethernet-switch1-stats-object.txt")
    )
    assert (chip.rx_drop, chip.tx_drop, chip.rx_too_long, chip.rx_fcs_error) == (0, 0, 75, 0)
    (cpu,) = parse_ethernet_stats(
        sample("routeros-stats/rest-tfprov-interface-ethernet-switch-port-object.txt")
    )
    assert (cpu.name, cpu.rx_drop, cpu.tx_drop, cpu.rx_fcs_error) == ("switch1-cpu", None, None, 0)


def test_stats_table_and_detail_forms_agree() -> None:
    table = parse_ethernet_stats(
        sample("routeros-stats/manual-interface-print-stats-v7-table-thousands-spaces.txt")
    )
    detail = parse_ethernet_stats(
        sample("routeros-stats/manual-interface-print-stats-detail-v7-wrapped.txt")
    )
    assert (
        [s.name for s in table]
        == [s.name for s in detail]
        == [
            "ether1",
            "ether2",
            "ether3",
            "ether4",
            "ether5",
            "sfp1",
        ]
    )
    assert table[0].counters["rx-byte"] == 205_149_015
    assert detail[0].counters["rx-byte"] == 205_164_277
    assert detail[0].counters["tx-queue-drop"] == table[0].counters["tx-queue-drop"] == 2


# ---------------------------------------------------------------- sparkfabric parse


@pytest.mark.parametrize(("tool", "name"), GOLDEN)
def test_sparkfabric_parse_prints_the_golden_json(
    tool: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["parse", tool, str(DATA / tool / name)]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(
        _expected(tool, name).read_text(encoding="utf-8")
    )


def test_sparkfabric_parse_names_the_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "stats.txt"
    saved.write_text("bad command name stats (line 1 column 21)\r\n", encoding="utf-8")
    assert main(["parse", "routeros-stats", str(saved)]) == 2
    assert capsys.readouterr().err == (
        f"sparkfabric parse: {saved} is not routeros-stats output: routeros /interface ethernet "
        "print stats: RouterOS refused the command: 'bad command name stats (line 1 column 21)'\n"
    )
