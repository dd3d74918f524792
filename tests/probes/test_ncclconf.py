"""NCCL's configuration as NCCL reads it: precedence (conf-file lines: tests/data/nccl-conf),
NCCL_IB_HCA per NCCL version (the product's and the simulator's, against NCCL's own results),
NCCL_SOCKET_IFNAME (src/misc/socket.cc, v2.30.7-1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes.ncclconf import (
    EnvSource,
    Iface,
    effective_nccl_env,
    find_nccl_version,
    grammar_for,
    select_hcas,
    select_socket_ifs,
)
from sparkfabric_sim import nccl_select
from tests.nccl_ib_hca_golden import DEVICES, cases, expected

FAST = settings(max_examples=60, deadline=None)
SPARK = ("rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1")


def test_nccl_precedence_names_file_and_line() -> None:
    etc = EnvSource.from_text(
        "/etc/nccl.conf", "NCCL_NET=Socket\nNCCL_IB_DISABLE=1\n", "system_conf"
    )
    home = EnvSource.from_text("/home/u/.nccl.conf", "NCCL_IB_DISABLE=0\n", "user_conf")
    custom = EnvSource.from_text("/opt/n.conf", "NCCL_NET=IB\n", "conf_file")
    env = EnvSource.from_mapping(
        "cluster.yaml nccl.env", {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1"}
    )
    decided = effective_nccl_env([etc, home, custom, env])
    assert decided["NCCL_IB_HCA"].where == "cluster.yaml nccl.env"
    # No NCCL_CONF_FILE in the process environment: ~/.nccl.conf counts, /opt/n.conf does not.
    assert decided["NCCL_IB_DISABLE"].value == "0"
    assert decided["NCCL_IB_DISABLE"].where == "/home/u/.nccl.conf line 1"
    assert [s.source for s in decided["NCCL_IB_DISABLE"].shadowed] == ["/etc/nccl.conf"]
    assert decided["NCCL_NET"].value == "Socket"
    assert decided["NCCL_NET"].where == "/etc/nccl.conf line 1"
    env2 = EnvSource.from_mapping("env", {"NCCL_CONF_FILE": "/opt/n.conf"})
    decided2 = effective_nccl_env([etc, home, custom, env2])
    assert decided2["NCCL_NET"].value == "IB" and decided2["NCCL_NET"].source == "/opt/n.conf"
    assert decided2["NCCL_IB_DISABLE"].value == "1"
    same = EnvSource.from_text("/etc/nccl.conf", "X=1\nX=2\n", "system_conf")
    assert effective_nccl_env([same])["X"].value == "1"  # in one file too, the first line wins


kinds = st.sampled_from(["process", "user_conf", "system_conf"])
small_env = st.dictionaries(
    st.sampled_from(["A", "B", "C"]), st.text("xyz", max_size=3), max_size=3
)


@FAST
@given(layers=st.lists(st.tuples(kinds, small_env), max_size=5))
def test_nccl_precedence_earlier_kind_always_wins(layers: list[tuple[str, dict[str, str]]]) -> None:
    order = {"process": 0, "user_conf": 1, "system_conf": 2}
    sources = [
        EnvSource.from_mapping(f"s{i}", env, kind)  # type: ignore[arg-type]
        for i, (kind, env) in enumerate(layers)
    ]
    decided = effective_nccl_env(sources)
    ranked = sorted(enumerate(layers), key=lambda p: (order[p[1][0]], p[0]))
    for key in {k for _, env in layers for k in env}:
        first = next(i for i, (_, env) in ranked if key in env)
        assert decided[key].source == f"s{first}"
        assert decided[key].value == layers[first][1][key]


# ---------------------------------------------------------------- NCCL_IB_HCA


def _names(spec: str | None, devices: tuple[str, ...] = SPARK) -> list[str]:
    return [s.device for s in select_hcas(spec, devices)]


names = st.text(alphabet="rocepP12sf0", min_size=1, max_size=12)
device_lists = st.lists(names, min_size=1, max_size=6, unique=True).map(tuple)


@FAST
@given(devices=device_lists, data=st.data())
def test_hca_excluded_name_never_selected(devices: tuple[str, ...], data: st.DataObject) -> None:
    assert _names("=" + ",".join(devices), devices) == list(devices)
    name = data.draw(st.sampled_from(devices))
    assert name not in _names("^=" + name, devices)
    assert not any(d.startswith(name) for d in _names("^" + name, devices))
    assert name in _names(name, devices) and name in _names("=" + name, devices)


@FAST
@given(devices=device_lists, spec=st.text(alphabet="rocepP12sf0,:=^", max_size=16))
def test_hca_exclusion_is_the_complement(devices: tuple[str, ...], spec: str) -> None:
    if spec.startswith("^"):
        return
    chosen = set(_names(spec, devices))
    excluded = set(_names("^" + spec, devices))
    assert chosen.isdisjoint(excluded)
    assert chosen | excluded == set(devices)
    assert _names(spec, devices) == [d for d in devices if d in chosen]


@FAST
@given(spec=st.text(max_size=40), devices=st.lists(st.text(max_size=8), max_size=5))
def test_hca_total(spec: str, devices: list[str]) -> None:
    assert set(_names(spec, tuple(devices))) <= set(devices)


@pytest.mark.parametrize("simulator", [False, True], ids=["product", "simulator"])
@pytest.mark.parametrize(("value", "version"), cases())
def test_selection_matches_nccl(value: str | None, version: str, simulator: bool) -> None:
    """Each against NCCL's own results, never against the other."""
    ver = find_nccl_version(f"NCCL version {version}+cuda13.0")
    assert ver is not None and nccl_select.parse_version(f"{version}+cuda13.0") == ver
    if simulator:
        chosen = tuple(nccl_select.select(value, DEVICES, ver))
    else:
        chosen = tuple(s.device for s in select_hcas(value, DEVICES, version=ver))
    assert chosen == expected(value, version)


def test_version_from_log_and_library_and_its_grammar() -> None:
    log = "spark-1:123:123 [0] NCCL INFO Bootstrap : Using enP7s7\nNCCL version 2.21.5+cuda12.4\n"
    assert find_nccl_version(log) == (2, 21, 5)
    libs = "/usr/lib/*/libnccl.so.2.* /usr/lib/aarch64-linux-gnu/libnccl.so.2.30.7\n"
    assert find_nccl_version(libs) == (2, 30, 7)
    assert find_nccl_version("/usr/lib/*/libnccl.so.2.*") is None
    assert grammar_for(None) == "classic"  # unknown: every release from 2019 to April 2026
    for grammar in (grammar_for, nccl_select.grammar_of):
        assert grammar((2, 30, 4)) == "classic"
        assert grammar((2, 30, 7)) == "rail_plane"
        assert grammar((2, 4, 8)) == "caret_only"


# ---------------------------------------------------------------- NCCL_SOCKET_IFNAME

NODE = [
    Iface("lo", True, True),
    Iface("enP7s7", True, True),
    Iface("docker0", True, True),
    Iface("enp1s0f1np1", True, True),
    Iface("enp1s0f0np0", False, True),
    Iface("wlP9s9", True, False),
]


@pytest.mark.parametrize(
    ("value", "selected"),
    [
        ("enP7s7", ["enP7s7"]),
        ("=enP7s7", ["enP7s7"]),
        ("enP7", ["enP7s7"]),
        ("=enP7", []),
        ("eth0", []),
        ("enp1s0f0np0", []),  # no carrier: not running
        ("wlP9s9", []),  # no address
        ("^docker,lo", ["enP7s7", "enp1s0f1np1"]),
        ("^=docker0", ["lo", "enP7s7", "enp1s0f1np1"]),
        ("enp1s0f1np1:1", ["enp1s0f1np1"]),
        ("^", ["enP7s7", "enp1s0f1np1"]),  # one character: unset
        ("^=", []),  # an empty exclude list excludes everything
        ("e", ["enP7s7", "enp1s0f1np1"]),  # one character: unset
        (None, ["enP7s7", "enp1s0f1np1"]),  # unset: no ib*, then ^docker,lo,virbr
        ("ENP7S7", []),
    ],
)
def test_selection_follows_nccls_rules(value: str | None, selected: list[str]) -> None:
    assert select_socket_ifs(value, NODE) == selected


def test_unset_falls_back_to_docker_then_lo() -> None:
    only = [Iface("lo", True, True), Iface("docker0", True, True)]
    assert select_socket_ifs(None, only) == ["docker0"]
    assert select_socket_ifs(None, only[:1]) == ["lo"]
    assert select_socket_ifs(None, [Iface("ib0", True, True), *NODE]) == ["ib0"]
