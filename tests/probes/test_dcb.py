"""``dcb pfc show dev X`` (iproute2 man dcb-pfc.8) read into PFC flags per priority."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import ParseError
from pytest_sparkfabric.probes.dcb import build_dcb_pfc, parse_dcb_pfc

PFC_3 = "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n"


@pytest.mark.parametrize(
    ("text", "priorities"),
    [("pfc-cap 8 macsec-bypass off delay 4096\n" + PFC_3, (3,)), (PFC_3.replace("on", "off"), ())],
)
def test_pfc_flags(text: str, priorities: tuple[int, ...]) -> None:
    assert parse_dcb_pfc(text).pfc_priorities == priorities


def test_no_table_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="prio-pfc"):
        parse_dcb_pfc("Error: Device does not support DCB.\n")


def test_command() -> None:
    assert str(build_dcb_pfc("enp1s0f1np1")) == "dcb pfc show dev enp1s0f1np1"
