"""`sparkfabric init`: every topology and legal node count gives a file that validates."""

# ruff: noqa: E501

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.cluster import initgen, parse_cluster
from pytest_sparkfabric.cluster.plan import plan
from tests.cluster.samples import RING

LEGAL = {"direct": (2, 2), "mesh": (3, 3), "ring": (4, 16), "switch": (2, 8)}

names = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,20}\Z")


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, list[str], dict[str, Any]]:
    topo = draw(st.sampled_from(sorted(LEGAL)))
    count = draw(st.integers(*LEGAL[topo]))
    chosen = draw(st.lists(names, min_size=count, max_size=count, unique=True))
    need = initgen.subnets_needed(topo, count)
    small = f"172.16.0.0/{24 - (need - 1).bit_length()}"
    opts = {
        "port": draw(st.sampled_from([None, 0, 1])) if topo in ("direct", "switch") else None,
        "subnet_pool": draw(st.sampled_from([None, "10.20.0.0/16", small, "192.168.0.0/19"])),
        "mtu": draw(st.sampled_from([None, 1500, 9000, 576, 9216])),
        "transport": draw(st.sampled_from(initgen.INIT_TRANSPORTS)),
        "link_speed": draw(st.sampled_from(["200G", "100G"])),
    }
    return topo, chosen, opts


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(requests())
def test_generated_files_validate_and_round_trip(
    req: tuple[str, list[str], dict[str, Any]],
) -> None:
    topo, chosen, opts = req
    cluster = parse_cluster(initgen.generate(topo, chosen, **opts))
    spec = cluster.spec
    assert (spec.topology, spec.transport) == (topo, opts["transport"])
    assert spec.link_speed == opts["link_speed"]
    assert [n.name for n in cluster.nodes] == chosen
    assert cluster.mtu == (opts["mtu"] or (1500 if topo == "mesh" else 9000))
    planned = initgen.address_plan(topo, len(chosen), opts["port"], opts["subnet_pool"])
    for i, (node, want) in enumerate(zip(cluster.nodes, planned, strict=True)):
        assert node.ports == tuple(sorted(want))
        for p, (r0, r1) in want.items():
            assert (node.rail(p, 0).address, node.rail(p, 1).address) == (r0, r1)
            assert r0.ip.packed[-1] == 11 + i
    subnets, fabric = initgen.pool_subnets(opts["subnet_pool"]), plan(cluster)
    assert list(fabric.subnets) == subnets[: len(fabric.subnets)]  # in order, nothing skipped
    if topo != "switch":  # degree <= 2 without a switch
        for node in cluster.nodes:
            assert sum(node.name in pair.id.split("<->") for pair in fabric.pairs) <= 2
    if opts["transport"] == "ssh":
        assert all(n.ssh is not None and n.ssh.host == n.name for n in cluster.nodes)


@pytest.mark.parametrize(("topo", "count"), [("switch", 128), ("ring", 78)])
def test_the_largest_clusters_validate(topo: str, count: int) -> None:
    cluster = parse_cluster(initgen.generate(topo, initgen.node_names(str(count))))
    assert len(plan(cluster).links) == (count * (count - 1) if topo == "switch" else 2 * count)


def test_a_ring_matches_the_field_plan_and_odd_names_are_quoted() -> None:
    mine = parse_cluster(initgen.generate("ring", ["spark-1", "spark-2", "spark-3", "spark-4"]))
    assert [r.address for r in mine.rails] == [r.address for r in parse_cluster(RING).rails]
    odd = ["true", "null", "1e3", "0x1F", "2024-01-01", "no"]
    text = initgen.generate("ring", odd)
    assert [n.name for n in parse_cluster(text).nodes] == odd
    assert "- name: 'true'" in text


def test_a_minimal_direct_file_is_short() -> None:
    text = initgen.generate("direct", ["a", "b"], transport="sim")
    # 14 lines of cluster, 3 of the nccl playbook's paths (nccl:, binary, launcher)
    settings = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert len(settings) <= 17, text


def test_names_and_pools() -> None:
    assert initgen.node_names("3") == ["spark-1", "spark-2", "spark-3"]
    assert initgen.node_names(" a, b ,c,") == ["a", "b", "c"]
    subnets = initgen.pool_subnets(None)
    assert (str(subnets[0]), str(subnets[-1])) == ("192.168.100.0/24", "192.168.255.0/24")
    assert [initgen.switch_port_name(i) for i in (0, 3)] == ["qsfp56-dd-1-1", "qsfp56-dd-2-5"]


@pytest.mark.parametrize(
    ("args", "opts", "message"),
    [
        (("mesh", ["a", "b", "c", "d"]), {}, "topology mesh needs exactly 3 nodes (a Spark has 2 ports); --nodes names 4. Fix: use --topology ring or switch."),
        (("switch", [f"n{i}" for i in range(129)]), {}, "topology switch needs 2 to 128 nodes (one switch leg per node); --nodes names 129. Fix: use --topology ring."),
        (("direct", ["a", "a"]), {}, "node name(s) a given twice. Fix: every node needs its own name."),
        (("direct", ["a", "b c"]), {}, "node name 'b c' is not valid. Fix: use letters, digits, '.', '_' and '-' only, starting with a letter or digit (at most 63 characters)."),
        (("ring", [f"n{i}" for i in range(6)]), {"subnet_pool": "10.0.0.0/22"}, "--subnet-pool 10.0.0.0/22 holds 4 /24s; ring with 6 nodes needs 12 (2 per cable). Fix: give a /20 or larger, e.g. --subnet-pool 192.168.0.0/20."),
        (("direct", ["a", "b"]), {"subnet_pool": "10.0.0.0/25"}, "--subnet-pool 10.0.0.0/25 holds 0 /24s; direct with 2 nodes needs 2 (2 per cluster, one per rail). Fix: give a /23 or larger, e.g. --subnet-pool 192.168.0.0/23."),
        (("direct", ["a", "b"]), {"subnet_pool": "10.0.0/33"}, "--subnet-pool '10.0.0/33' is not an IPv4 network. Fix: write it like 192.168.96.0/19."),
        (("ring", ["a", "b", "c", "d"]), {"port": 1}, "--port is for direct and switch; ring nodes are cabled on both ports (port 0 of each to port 1 of the next). Fix: leave out --port."),
        (("direct", ["a", "b"]), {"port": 2}, "--port 2 does not exist. Fix: a Spark has QSFP ports 0 and 1."),
        (("direct", ["a", "b"]), {"mtu": 100}, "--mtu 100 is out of range. Fix: use 576 to 9216 (9000 for jumbo)."),
    ],
)  # fmt: skip
def test_impossible_requests(
    args: tuple[str, list[str]], opts: dict[str, Any], message: str
) -> None:
    with pytest.raises(initgen.InitError) as info:
        initgen.generate(*args, **opts)
    assert str(info.value) == message
