"""Every real sample in tests/data parses to the expected JSON beside it (tests/probes/golden.py).

One generic test covers every sample with the parser ``sparkfabric parse`` uses for its tool;
the checks after it keep the layout honest (every registered parser has a real sample, every
folder names a tool and lists its samples' provenance, no expected file without its sample).
``SPARKFABRIC_UPDATE_GOLDEN=1`` rewrites the expected files; review each diff by eye.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sparkfabric.probes import PARSERS, outcome_to_json
from pytest_sparkfabric.probes.routeros import parse_routeros_monitor, parse_system_resource

from . import golden
from ._samples import sample

SAMPLES = golden.raw_samples()


@pytest.mark.parametrize("raw", SAMPLES, ids=golden.sample_id)
def test_sample_parses_to_its_expected_json(raw: Path) -> None:
    tool = golden.folder_tool(raw.parent.name)
    got = outcome_to_json(PARSERS[tool], golden.read(raw))
    expected = golden.expected_path(raw)
    if golden.updating():
        expected.write_text(got, encoding="utf-8")
    assert expected.exists(), (
        f"{golden.sample_id(raw)} has no expected parse beside it: run "
        f"{golden.UPDATE_ENV}=1 pytest tests/probes/test_golden.py, then review "
        f"{expected.name} against the folder's PROVENANCE.md"
    )
    assert json.loads(got) == json.loads(expected.read_text(encoding="utf-8"))


def test_every_folder_is_a_registered_tool() -> None:
    unknown = [f.name for f in golden.sample_folders() if golden.folder_tool(f.name) not in PARSERS]
    assert unknown == [], f"tests/data folders naming no parser in probes.PARSERS: {unknown}"


def test_every_registered_parser_has_a_real_sample() -> None:
    real: dict[str, int] = {}
    for raw in SAMPLES:
        if not golden.is_synthetic(raw):
            tool = golden.folder_tool(raw.parent.name)
            real[tool] = real.get(tool, 0) + 1
    for folder, (tools, _why) in golden.OWNED_ELSEWHERE.items():
        if any(golden.is_raw(p) for p in (golden.DATA / folder).iterdir()):
            real.update(dict.fromkeys(tools, 1))
    missing = sorted(set(PARSERS) - set(real))
    assert missing == [], f"parsers without a real sample in tests/data: {missing}"


@pytest.mark.parametrize("folder", golden.sample_folders(), ids=lambda p: p.name)
def test_every_sample_has_provenance(folder: Path) -> None:
    provenance = folder / "PROVENANCE.md"
    assert provenance.exists(), f"tests/data/{folder.name} has no PROVENANCE.md"
    text = provenance.read_text(encoding="utf-8")
    unlisted = [p.name for p in golden.raw_files(folder) if p.name not in text]
    assert unlisted == [], f"tests/data/{folder.name}/PROVENANCE.md does not list {unlisted}"


def test_no_expected_file_without_its_sample() -> None:
    orphans = [
        str(p.relative_to(golden.DATA))
        for folder in golden.sample_folders()
        for p in folder.glob(f"*{golden.EXPECTED_SUFFIX}")
        if not any(golden.expected_path(r) == p for r in golden.raw_files(folder))
    ]
    assert orphans == []


# ---------------------------------------------------------------- RouterOS


def test_routeros_monitor_skips_log_line() -> None:
    r = parse_routeros_monitor(sample("routeros/monitor-once-ether1-log-line-interleaved.txt"))
    assert (r.name, r.status, r.rate_gbps, r.full_duplex) == ("ether1", "link-ok", 1.0, True)
    assert r.raw["tx-flow-control"] == "no" and r.raw["rx-flow-control"] == "no"
    assert not any("echo" in k or k[0].isdigit() for k in r.raw)
    assert r.link_ok


def test_routeros_monitor_sfp_eeprom_continuation() -> None:
    r = parse_routeros_monitor(sample("routeros/monitor-once-sfp-sfpplus24-eeprom.txt"))
    assert (r.rate_gbps, r.sfp_tx_power_dbm, r.sfp_rx_power_dbm, r.sfp_temp_c) == (
        10.0,
        -2.843,
        -1.203,
        33.0,
    )
    assert r.raw["sfp-type"] == "SFP-or-SFP+"
    assert r.raw["eeprom-checksum"] == "good"
    assert r.sfp_vendor_part_number == "S+85DLC03D"
    eeprom = r.raw["eeprom"].split("\n")
    assert len(eeprom) == 16
    assert eeprom[0].startswith("0000: 03 04 07 10") and eeprom[-1].startswith("00f0:")
    assert r.raw["advertising"] == ""


def test_routeros_monitor_no_link() -> None:
    r = parse_routeros_monitor(sample("routeros/monitor-once-ether30-no-link.txt"))
    assert (r.name, r.status, r.rate_gbps, r.full_duplex) == ("ether30", "no-link", None, None)
    assert r.raw["link-partner-advertising"] == ""
    assert not r.link_ok


def test_routeros_system_resource_ccr2004() -> None:
    r = parse_system_resource(sample("routeros/system-resource-print-ccr2004-7.12.2.txt"))
    assert (r.version, r.cpu_load_pct, r.board_name) == (
        "7.12.2 (stable)",
        36,
        "CCR2004-1G-12S+2XS",
    )
    assert (r.uptime, r.architecture, r.cpu_count) == ("10w2d6h21m59s", "arm64", 4)
    assert r.free_memory_bytes == int(3704.1 * 2**20)
    assert r.total_memory_bytes == 4032 * 2**20
    assert "cpu-frequency" not in r.raw


def test_routeros_system_resource_chr_leading_tabs() -> None:
    r = parse_system_resource(sample("routeros/system-resource-print-chr-leading-tabs.txt"))
    assert (r.uptime, r.cpu_load_pct, r.board_name) == ("5w3d20m51s", 53, "CHR")
    assert "bad-blocks" not in r.raw
