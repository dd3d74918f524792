"""Command builders and the pure helpers no golden file reads: examples plus properties (the argv
of every command the suite sends: tests/test_command_argv.py)."""

from __future__ import annotations

import contextlib
import json
import pickle
import shlex
from ipaddress import IPv4Address, IPv6Address
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes import ParseError, to_jsonable
from pytest_sparkfabric.probes.ethtool import parse_ethtool_driver
from pytest_sparkfabric.probes.ip import build_ip_addr, parse_ip_addr_json
from pytest_sparkfabric.probes.iperf3 import parse_iperf3_json
from pytest_sparkfabric.probes.mlnx_qos import build_dcb_pfc, parse_dcb_pfc
from pytest_sparkfabric.probes.nvidia_smi import build_gpu_query
from pytest_sparkfabric.probes.perftest import build_ib_write_bw
from pytest_sparkfabric.probes.ping import build_ping, parse_ping
from pytest_sparkfabric.probes.sysfs import (
    build_read_files,
    find_rocev2_gid,
    gid_paths,
    gid_table,
    hwmon_temps_c,
    link_speed_gt_s,
    net_sysctls,
    parse_read_files,
    port_state,
    sysctl_paths,
)

FAST = settings(max_examples=60, deadline=None)
PEER = IPv4Address("192.168.100.12")
PFC_3 = "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n"


@pytest.mark.parametrize(
    ("command", "text"),
    [
        (
            build_ib_write_bw("rocep1s0f1", qps=4, duration_s=10, port=18515),
            "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 4 -D 10 -p 18515",
        ),
        (
            build_ib_write_bw("rocep1s0f1", PEER, qps=1, duration_s=5, port=18516),
            "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 1 -D 5 -p 18516 192.168.100.12",
        ),
        (
            build_ping(PEER, interface="enp1s0f1np1", payload_bytes=8972),
            "ping -M do -s 8972 -I enp1s0f1np1 -c 3 -W 1 -w 5 192.168.100.12",
        ),
        (
            build_gpu_query(),
            "nvidia-smi --query-gpu=temperature.gpu,power.draw,clocks.sm,utilization.gpu"
            " --format=csv,noheader,nounits",
        ),
        (build_ip_addr(), "ip -j addr show"),
        (build_dcb_pfc("enp1s0f1np1"), "dcb pfc show dev enp1s0f1np1"),
        (build_read_files([]), "true"),
    ],
)
def test_command_text(command: str, text: str) -> None:
    assert command == text


def test_builders_quote_names_and_refuse_bad_numbers() -> None:
    hostile = build_ib_write_bw("x; rm -rf /", qps=1, duration_s=1, port=1)
    assert shlex.split(hostile)[2] == "x; rm -rf /"
    assert "'/tmp/it'\"'\"'s here'" in build_read_files(["/proc/x", "/tmp/it's here"])
    with pytest.raises(ValueError):
        build_ib_write_bw("d", qps=0, duration_s=1, port=1)
    with pytest.raises(ValueError):
        build_ping(PEER, interface="e", payload_bytes=70000)
    with pytest.raises(ValueError):
        build_read_files(["a\tb"])


def test_ip_addr_json_skips_what_a_family_filter_leaves_empty() -> None:
    # `ip -j -4 addr` prints {} for an interface without IPv4; every other form (two arrays
    # back to back, link show without addr_info, a missing device) is a golden sample.
    text = json.dumps([{"ifname": "a", "flags": ["UP"], "mtu": 9000}, {}])
    assert [(i.name, i.admin_up, i.carrier) for i in parse_ip_addr_json(text)] == [
        ("a", True, False)
    ]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)
addr_info = st.fixed_dictionaries({}, optional={"local": json_values, "prefixlen": json_values})
ip_like = st.lists(
    st.fixed_dictionaries(
        {},
        optional={k: json_values for k in ("ifname", "mtu", "flags")}
        | {"addr_info": st.lists(addr_info, max_size=3) | json_values},
    ),
    max_size=4,
)


@FAST
@given(doc=ip_like | json_values)
def test_ip_and_iperf3_total_on_any_json(doc: object) -> None:
    for parser in (parse_ip_addr_json, parse_iperf3_json):
        with contextlib.suppress(ParseError):
            to_jsonable(parser(json.dumps(doc)))


paths = st.text(alphabet="abc/_.-0123456789", min_size=1, max_size=20)
contents = st.none() | st.text(alphabet="abc 0123456789:.\n", max_size=20).map(
    lambda s: s.strip("\n")
)


@FAST
@given(values=st.dictionaries(paths, contents, max_size=6))
def test_read_files_round_trip(values: dict[str, str | None]) -> None:
    """What build_read_files' loop prints for these file contents reads back."""
    text = "".join(
        f"SFREAD\tok\t{path}\t{value}\n" if value is not None else f"SFREAD\tmissing\t{path}\n"
        for path, value in values.items()
    )
    assert parse_read_files(text) == values


def test_net_sysctls_are_the_max_of_all_and_the_interface() -> None:
    p = sysctl_paths("enp1s0f1np1")
    values = dict(zip(p.values(), ["0", "1", "2", "0", "1", None, "1"], strict=True))
    assert list(p) == [
        "all.arp_ignore",
        "enp1s0f1np1.arp_ignore",
        "all.arp_announce",
        "enp1s0f1np1.arp_announce",
        "all.rp_filter",
        "enp1s0f1np1.rp_filter",
        "disable_ipv6",
    ]
    s = net_sysctls(values, "enp1s0f1np1")
    assert (s.arp_ignore, s.arp_announce, s.rp_filter, s.disable_ipv6) == (1, 2, 1, 1)
    assert net_sysctls({}, "x").arp_ignore is None


def test_gid_table_and_rocev2_lookup() -> None:
    base = "/sys/class/infiniband/rocep1s0f1/ports/1"
    values = dict.fromkeys(gid_paths("rocep1s0f1", range(6)))
    for i, gid, kind in [
        (0, "fe80:0000:0000:0000:4ebb:47ff:fe00:0001", "IB/RoCE v1"),
        (3, "0000:0000:0000:0000:0000:ffff:c0a8:640b", "RoCE v2"),
        (4, "0000:0000:0000:0000:0000:0000:0000:0000", "RoCE v2"),
    ]:
        values[f"{base}/gids/{i}"], values[f"{base}/gid_attrs/types/{i}"] = gid, kind
        values[f"{base}/gid_attrs/ndevs/{i}"] = "enp1s0f1np1"
    table = gid_table(values, "rocep1s0f1")
    assert [e.index for e in table] == [0, 3]
    assert table[1].ipv4 == IPv4Address("192.168.100.11")
    hit = find_rocev2_gid(table, "enp1s0f1np1", IPv4Address("192.168.100.11"))
    assert hit is not None and hit.index == 3
    assert find_rocev2_gid(table, "enP2p1s0f1np1", IPv4Address("192.168.100.11")) is None


@given(v4=st.ip_addresses(v=4))
def test_ipv4_mapped_gid_round_trip(v4: IPv4Address) -> None:
    gid = IPv6Address(f"::ffff:{v4}").exploded
    base = "/sys/class/infiniband/d/ports/1"
    table = gid_table({f"{base}/gids/5": gid, f"{base}/gid_attrs/types/5": "RoCE v2"}, "d")
    assert table[0].ipv4 == v4


def test_port_pcie_hwmon_helpers() -> None:
    assert (port_state("4: ACTIVE").code, port_state("4: ACTIVE").name) == (4, "ACTIVE")
    assert port_state("5: LinkUp").name == "LinkUp"
    assert port_state(None).code is None
    assert link_speed_gt_s("32.0 GT/s PCIe") == 32.0
    assert link_speed_gt_s("Unknown") is None
    temps = hwmon_temps_c({"/sys/x/hwmon/hwmon3/temp1_input": "81000", "/sys/x/name": "mlx5"})
    assert temps == {"/sys/x/hwmon/hwmon3/temp1_input": 81.0}


def test_ping_errors_on_stderr() -> None:
    # Lost and local-MTU runs round-trip in sim/test_formats.py and test_sample_facts.py.
    assert parse_ping("", "ping: SO_BINDTODEVICE enp9: No such device\n", 2).verdict == "error"
    r = parse_ping("", "ping: connect: Network is unreachable\n", 2)
    assert r.error_text == "ping: connect: Network is unreachable"


@pytest.mark.parametrize(
    ("text", "priorities"),
    [("pfc-cap 8 macsec-bypass off delay 4096\n" + PFC_3, (3,)), (PFC_3.replace("on", "off"), ())],
)
def test_dcb_pfc_flags(text: str, priorities: tuple[int, ...]) -> None:
    # dcb pfc show dev X, as iproute2's man dcb-pfc.8 prints it.
    assert parse_dcb_pfc(text).pfc_priorities == priorities
    with pytest.raises(ParseError, match="prio-pfc"):
        parse_dcb_pfc("Error: Device does not support DCB.\n")


@pytest.mark.parametrize(
    ("name", "version", "firmware"),
    [
        # MLNX_OFED: its own version, the firmware with its PSID
        ("cx7-mlnx-ofed-23.10-fw-28.39.3560.txt", "23.10-3.2.2", "28.39.3560 (MT_0000000838)"),
        # GB10's inbox driver: the kernel release
        ("gb10-inbox-6.11-nvidia-fw-28.45.4028-excerpt.txt", "6.11.0-1014-nvidia", "28.45.4028"),
    ],
)
def test_ethtool_driver_version_and_firmware(name: str, version: str, firmware: str) -> None:
    # Samples and their provenance: tests/probes/ethtool_i_samples/.
    text = (Path(__file__).parent / "ethtool_i_samples" / name).read_text()
    info = parse_ethtool_driver(text)
    assert (info.driver, info.version, info.firmware_version) == ("mlx5_core", version, firmware)
    with pytest.raises(ParseError, match="driver"):
        parse_ethtool_driver("Cannot get driver information: No such device\n")


def test_parse_error_pickles_with_its_attributes_and_json_has_no_infinity() -> None:
    err = ParseError("ib_write_bw", "expected a row", "'Couldn't connect'")
    assert str(err) == "ib_write_bw: expected a row; found: 'Couldn't connect'"
    assert str(ParseError("ib_write_bw", "expected a row")) == "ib_write_bw: expected a row"
    back = pickle.loads(pickle.dumps(err))  # xdist workers send it back pickled
    assert isinstance(back, ParseError) and isinstance(back, ValueError)
    assert (back.tool, back.missing, back.found) == ("ib_write_bw", "expected a row", err.found)
    assert to_jsonable({"inf": float("-inf"), "s": frozenset({"b", "a"})}) == {
        "inf": None,
        "s": ["a", "b"],
    }
