"""`sparkfabric init`: every topology and legal node count gives a file that validates."""

from __future__ import annotations

import re
from ipaddress import IPv4Network

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.cluster import initgen, parse_cluster
from pytest_sparkfabric.cluster.plan import plan
from tests.cluster.samples import RING

LEGAL = {"direct": (2, 2), "mesh": (3, 3), "ring": (4, 16), "switch": (2, 8)}

names = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,20}\Z")


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, list[str], int | None, str | None, int | None, str]:
    topo = draw(st.sampled_from(sorted(LEGAL)))
    lo, hi = LEGAL[topo]
    count = draw(st.integers(lo, hi))
    chosen = draw(st.lists(names, min_size=count, max_size=count, unique=True))
    port = draw(st.sampled_from([None, 0, 1])) if topo in ("direct", "switch") else None
    need = initgen.subnets_needed(topo, count)
    pool = draw(
        st.sampled_from(
            [None, "10.20.0.0/16", f"172.16.0.0/{24 - (need - 1).bit_length()}", "192.168.0.0/19"]
        )
    )
    mtu = draw(st.sampled_from([None, 1500, 9000, 576, 9216]))
    transport = draw(st.sampled_from(initgen.INIT_TRANSPORTS))
    return topo, chosen, port, pool, mtu, transport


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(requests())
def test_generated_files_validate_and_round_trip(
    req: tuple[str, list[str], int | None, str | None, int | None, str],
) -> None:
    topo, chosen, port, pool, mtu, transport = req
    text = initgen.generate(topo, chosen, port=port, subnet_pool=pool, mtu=mtu, transport=transport)
    cluster = parse_cluster(text)
    assert cluster.topology == topo
    assert [n.name for n in cluster.nodes] == chosen
    assert cluster.spec.transport == transport
    assert cluster.mtu == (mtu if mtu is not None else 1500 if topo == "mesh" else 9000)
    subnets = initgen.pool_subnets(pool)
    planned = initgen.address_plan(topo, chosen, port, subnets)
    for node, want in zip(cluster.nodes, planned, strict=True):
        assert node.ports == tuple(sorted(want.ports))
        for p, (r0, r1) in want.ports.items():
            assert (node.rail(p, 0).address, node.rail(p, 1).address) == (r0, r1)
            assert r0.ip.packed[-1] == want.host == 11 + chosen.index(node.name)
    fabric = plan(cluster)
    # /24s from the pool in order, nothing skipped.
    assert list(fabric.subnets) == subnets[: len(fabric.subnets)]
    addresses = [r.address.ip for r in cluster.rails]
    assert len(addresses) == len(set(addresses))
    if topo != "switch":  # degree <= 2 without a switch
        for node in cluster.nodes:
            assert sum(node.name in pair.id.split("<->") for pair in fabric.pairs) <= 2
    if transport == "ssh":
        assert all(n.ssh is not None and n.ssh.host == n.name for n in cluster.nodes)


def test_ring_matches_the_field_plan() -> None:
    text = initgen.generate("ring", ["spark-1", "spark-2", "spark-3", "spark-4"])
    mine = parse_cluster(text)
    theirs = parse_cluster(RING)
    for a, b in zip(mine.nodes, theirs.nodes, strict=True):
        assert [r.address for r in a.rails] == [r.address for r in b.rails]


def test_minimal_direct_file_is_short() -> None:
    text = initgen.generate("direct", ["a", "b"], transport="sim")
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert len(body) <= 14, text


def test_names_that_yaml_would_read_as_other_things_are_quoted() -> None:
    odd = ["true", "null", "1e3", "0x1F", "2024-01-01", "no"]
    text = initgen.generate("ring", odd)
    assert [n.name for n in parse_cluster(text).nodes] == odd
    assert "- name: 'true'" in text


def test_node_count_shorthand() -> None:
    assert initgen.node_names("3") == ["spark-1", "spark-2", "spark-3"]
    assert initgen.node_names(" a, b ,c,") == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("mesh", ["a", "b", "c", "d"]), "topology mesh needs exactly 3 nodes"),
        (("direct", ["a"]), "topology direct needs exactly 2 nodes"),
        (("ring", ["a", "b", "c"]), "Fix: use --topology mesh or switch."),
        (("switch", [f"n{i}" for i in range(129)]), "needs 2 to 128 nodes (one switch leg per"),
        (("direct", ["a", "a"]), "node name(s) a given twice"),
        (("direct", ["a", "b c"]), "node name 'b c' is not valid"),
        (("bus", ["a", "b"]), "--topology 'bus' is not one of direct, mesh, ring, switch"),
    ],
)
def test_impossible_requests(args: tuple[str, list[str]], message: str) -> None:
    with pytest.raises(initgen.InitError, match=re.escape(message)):
        initgen.generate(*args)


def test_pool_too_small() -> None:
    with pytest.raises(initgen.InitError) as info:
        initgen.generate("ring", [f"n{i}" for i in range(6)], subnet_pool="10.0.0.0/22")
    assert str(info.value) == (
        "--subnet-pool 10.0.0.0/22 holds 4 /24s; ring with 6 nodes needs 12 (2 per cable). "
        "Fix: give a /20 or larger, e.g. --subnet-pool 192.168.0.0/20."
    )
    with pytest.raises(initgen.InitError, match="holds 0 /24s"):
        initgen.generate("direct", ["a", "b"], subnet_pool="10.0.0.0/25")
    with pytest.raises(initgen.InitError, match="is not an IPv4 network"):
        initgen.generate("direct", ["a", "b"], subnet_pool="10.0.0/33")


def test_option_errors() -> None:
    with pytest.raises(initgen.InitError, match="--port is for direct and switch"):
        initgen.generate("ring", ["a", "b", "c", "d"], port=1)
    with pytest.raises(initgen.InitError, match="--port 2 does not exist"):
        initgen.generate("direct", ["a", "b"], port=2)
    with pytest.raises(initgen.InitError, match="--mtu 100 is out of range"):
        initgen.generate("direct", ["a", "b"], mtu=100)
    with pytest.raises(initgen.InitError, match="--transport 'replay'"):
        initgen.generate("direct", ["a", "b"], transport="replay")


def test_default_pool_starts_at_192_168_100() -> None:
    subnets = initgen.pool_subnets(None)
    assert subnets[0] == IPv4Network("192.168.100.0/24")
    assert subnets[-1] == IPv4Network("192.168.255.0/24")
    assert initgen.switch_port_name(0) == "qsfp56-dd-1-1"
    assert initgen.switch_port_name(3) == "qsfp56-dd-2-5"


@pytest.mark.parametrize(
    ("topo", "count"),
    [
        *[(t, n) for t, (lo, hi) in sorted(LEGAL.items()) for n in range(lo, hi + 1)],
        ("switch", 64),
        ("switch", 128),
        ("ring", 64),
        ("ring", 78),
    ],
)
def test_every_legal_count_validates(topo: str, count: int) -> None:
    for transport in initgen.INIT_TRANSPORTS:
        text = initgen.generate(topo, initgen.node_names(str(count)), transport=transport)
        cluster = parse_cluster(text)
        assert len(cluster.nodes) == count
        links = len(plan(cluster).links)
        assert links == (count * (count - 1) if topo in ("direct", "switch") else 2 * count)
