"""ethtool output: link settings, `-S` statistics, `-m` module EEPROM (SFF-8636), `--show-fec`.

Layouts follow real outputs: settings as an mlx5 netdev prints them (tab indent, one link mode
per continuation line), `-S` as mlx5 (`NIC statistics:` then five spaces per counter), `-m` as
SFF-8636 (`%-41s : value`, copper DAC lines with attenuation), `--show-fec` as ethtool 6.x.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sparkfabric_sim.hardware import LINE_RATE_MBPS, CableSpec

LINK_MODES = (
    "1000baseKX/Full",
    "10000baseKR/Full",
    "40000baseKR4/Full",
    "40000baseCR4/Full",
    "40000baseSR4/Full",
    "40000baseLR4/Full",
    "25000baseCR/Full",
    "25000baseKR/Full",
    "25000baseSR/Full",
    "50000baseCR2/Full",
    "50000baseKR2/Full",
    "100000baseKR4/Full",
    "100000baseSR4/Full",
    "100000baseCR4/Full",
    "100000baseLR4_ER4/Full",
    "50000baseSR2/Full",
    "1000baseX/Full",
    "10000baseCR/Full",
    "10000baseSR/Full",
    "10000baseLR/Full",
    "10000baseER/Full",
    "50000baseKR/Full",
    "50000baseSR/Full",
    "50000baseCR/Full",
    "50000baseLR_ER_FR/Full",
    "50000baseDR/Full",
    "100000baseKR2/Full",
    "100000baseSR2/Full",
    "100000baseCR2/Full",
    "100000baseLR2_ER2_FR2/Full",
    "100000baseDR2/Full",
    "200000baseKR4/Full",
    "200000baseSR4/Full",
    "200000baseLR4_ER4_FR4/Full",
    "200000baseDR4/Full",
    "200000baseCR4/Full",
)


def _modes(label: str, modes: Sequence[str]) -> list[str]:
    head = f"\t{label:<24}"
    pad = "\t" + " " * 24
    return [head + modes[0], *(pad + m for m in modes[1:])]


MGMT_MODES = (
    "100baseT/Full",
    "1000baseT/Full",
    "2500baseT/Full",
    "5000baseT/Full",
    "10000baseT/Full",
)


def settings(
    netdev: str,
    link: bool,
    speed_mbps: int = LINE_RATE_MBPS,
    modes: Sequence[str] = LINK_MODES,
    port: str = "Direct Attach Copper",
    *,
    lanes: int | None = None,
) -> str:
    lines = [f"Settings for {netdev}:", "\tSupported ports: [ FIBRE ]"]
    lines += _modes("Supported link modes:", modes)
    lines += [
        "\tSupported pause frame use: Symmetric",
        "\tSupports auto-negotiation: Yes",
        "\tSupported FEC modes: None BaseR RS",
    ]
    lines += _modes("Advertised link modes:", modes)
    lines += [
        "\tAdvertised pause frame use: No",
        "\tAdvertised auto-negotiation: Yes",
        "\tAdvertised FEC modes: RS",
    ]
    if link:
        # ethtool netlink/settings.c prints "Lanes:" after the speed when the kernel reports
        # it (ETHTOOL_A_LINKMODES_LANES; mlx5 from Linux 6.15, DOMAIN.md §9).
        lanes_line = [f"\tLanes: {lanes}"] if lanes else []
        lines += [f"\tSpeed: {speed_mbps}Mb/s", *lanes_line, "\tDuplex: Full"]
    else:
        lines += ["\tSpeed: Unknown!", "\tDuplex: Unknown! (255)"]
    lines += [
        "\tAuto-negotiation: on",
        f"\tPort: {port}",
        "\tPHYAD: 0",
        "\tTransceiver: internal",
        "\tSupports Wake-on: d",
        "\tWake-on: d",
        "\tCurrent message level: 0x00000004 (4)",
        "\t\t\t       link",
        f"\tLink detected: {'yes' if link else 'no'}",
    ]
    return "\n".join(lines) + "\n"


def stats(counters: Sequence[tuple[str, int]]) -> str:
    return "NIC statistics:\n" + "".join(f"     {name}: {value}\n" for name, value in counters)


@dataclass(frozen=True, slots=True)
class ModuleReading:
    temp_c: float
    voltage_v: float


def _line(label: str, value: str) -> str:
    return f"{label:<41} : {value}"


def module(spec: CableSpec, reading: ModuleReading | None) -> str:
    return (_cmis if spec.cmis else _sff8636)(spec, reading)


def _cmis(spec: CableSpec, reading: ModuleReading | None) -> str:
    """A CMIS (QSFP112) passive DAC as ethtool's cmis.c prints page 00h: the identifier string
    is SFF-8024's (ethtool sff-common.c), the layout the QSFP-DD sample's (shared/samples/
    ethtool-m/cmis-qsfpdd-400g-...), the length in metres as ethtool prints it after the fix."""
    att = spec.attenuation_db
    temp = reading.temp_c if reading else 0.0
    volts = reading.voltage_v if reading else 0.0
    rows = [
        (
            "Identifier",
            "0x1e (QSFP+ or later with Common Management Interface Specification (CMIS))",
        ),
        ("Power class", "1"),
        ("Max power", "0.25W"),
        ("Connector", "0x23 (No separable connector)"),
        ("Cable assembly length", f"{spec.length_m:.2f}m"),
        ("Tx CDR bypass control", "No"),
        ("Rx CDR bypass control", "No"),
        ("Tx CDR", "No"),
        ("Rx CDR", "No"),
        ("Transmitter technology", "0x0a (Copper cable, unequalized)"),
        ("Attenuation at 5GHz", f"{att[0]}db"),
        ("Attenuation at 7GHz", f"{att[1]}db"),
        ("Attenuation at 12.9GHz", f"{att[2]}db"),
        ("Attenuation at 25.8GHz", f"{att[3]}db"),
        ("Module temperature", f"{temp:.2f} degrees C / {temp * 9 / 5 + 32:.2f} degrees F"),
        ("Module voltage", f"{volts:.4f} V"),
        *_vendor_rows(spec),
        ("Revision compliance", "Rev. 5.0"),
    ]
    return "\n".join(_line(k, v) for k, v in rows) + "\n"


def _vendor_rows(spec: CableSpec) -> list[tuple[str, str]]:
    """The identity rows, the same words in ethtool's SFF-8636 and CMIS decoders."""
    return [
        ("Vendor name", spec.vendor),
        ("Vendor OUI", spec.oui),
        ("Vendor PN", spec.part),
        ("Vendor rev", spec.rev),
        ("Vendor SN", spec.serial),
        ("Date code", spec.date_code),
    ]


def _sff8636(spec: CableSpec, reading: ModuleReading | None) -> str:
    att = spec.attenuation_db
    temp = reading.temp_c if reading else 0.0
    volts = reading.voltage_v if reading else 0.0
    rows = [
        ("Identifier", "0x11 (QSFP28)"),
        ("Extended identifier", "0x00"),
        ("Extended identifier description", "1.5W max. Power consumption"),
        ("Extended identifier description", "No CDR in TX, No CDR in RX"),
        ("Extended identifier description", "High Power Class (> 3.5 W) not enabled"),
        ("Power set", "Off"),
        ("Power override", "Off"),
        ("Connector", "0x23 (No separable connector)"),
        ("Transceiver codes", "0x08 0x00 0x00 0x00 0x00 0x00 0x00 0x00"),
        ("Transceiver type", "40G Ethernet: 40G Base-CR4"),
        ("Encoding", "0x08 (PAM4)"),
        ("BR, Nominal", "25500Mbps"),
        ("Rate identifier", "0x00"),
        ("Length (SMF,km)", "0km"),
        ("Length (OM3 50um)", "0m"),
        ("Length (OM2 50um)", "0m"),
        ("Length (OM1 62.5um)", "0m"),
        ("Length (Copper or Active cable)", f"{spec.length_m}m"),
        ("Transmitter technology", "0xa0 (Copper cable unequalized)"),
        ("Attenuation at 2.5GHz", f"{att[0]}db"),
        ("Attenuation at 5.0GHz", f"{att[1]}db"),
        ("Attenuation at 7.0GHz", f"{att[2]}db"),
        ("Attenuation at 12.9GHz", f"{att[3]}db"),
        *_vendor_rows(spec),
        ("Revision Compliance", "SFF-8636 Rev 2.5/2.6/2.7"),
        ("Module temperature", f"{temp:.2f} degrees C / {temp * 9 / 5 + 32:.2f} degrees F"),
        ("Module voltage", f"{volts:.4f} V"),
    ]
    return "\n".join(_line(k, v) for k, v in rows) + "\n"


def fec(netdev: str, link: bool) -> str:
    return (
        f"FEC parameters for {netdev}:\n"
        # GB10 CX-7 with FEC left on auto (tests/data/ethtool-fec/gb10-spark-*).
        "Supported/Configured FEC encodings: Auto\n"
        f"Active FEC encoding: {'RS' if link else 'None'}\n"
    )
