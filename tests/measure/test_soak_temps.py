"""Module temperature and its own limit from real `ethtool -m` outputs."""

from __future__ import annotations

from pathlib import Path

from pytest_sparkfabric.measure.soak_temps import degrees, module_temp
from pytest_sparkfabric.transport import RunResult

DATA = Path(__file__).resolve().parents[1] / "data" / "ethtool-m"


def _run(text: str, rc: int = 0) -> RunResult:
    return RunResult("spark-1", "ethtool -m enp1s0f1np1", rc, text, "", 0.1)


def test_a_module_with_diagnostics_gives_its_own_limit() -> None:
    text = (DATA / "sff8636-qsfp28-cwdm4-finisar-laser-off-cx4.txt").read_text()
    m = module_temp(_run(text))
    assert m is not None and (m.temp_c, m.limit_c, m.alarm) == (34.5, 60.0, None)


def test_a_passive_dac_gives_neither_temperature_nor_limit() -> None:
    text = (DATA / "sff8472-sfp-dac-ubiquiti-udc2-2m.txt").read_text()
    m = module_temp(_run(text))
    assert m is not None and not m.temp_c and m.limit_c is None and m.alarm is None


def test_an_unreadable_eeprom_is_not_sampled() -> None:
    text = (DATA / "host-ethtool6.1-veth-m-netlink-error-not-supported.txt").read_text()
    assert module_temp(_run(text, rc=1)) is None


def test_degrees() -> None:
    assert degrees("60.00 degrees C / 140.00 degrees F") == 60.0
    assert degrees("n/a") is None
