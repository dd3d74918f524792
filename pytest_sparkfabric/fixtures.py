"""Fixtures of the shipped suite, registered only when --cluster is given.

Nouns are parametrised in `pytest_generate_tests` through private indirect fixtures, so ids are
readable and stable (`spark-1:rail0->spark-2:rail0`) and every xdist worker collects the same items.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.measure import bwplan
from pytest_sparkfabric.session import VERDICT_ID, VerdictItem, get_session
from pytest_sparkfabric.verdict import Verdict

if TYPE_CHECKING:
    import testinfra.host

    from pytest_sparkfabric.cluster import Cluster, Node, Rail
    from pytest_sparkfabric.cluster.plan import DirectedLink, Link, NodePair, Plan
    from pytest_sparkfabric.cluster.spec import SwitchSpec
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.session import SparkSession

MARKERS = (
    "links: link health of every rail netdev and RoCE device",
    "mtu: MTU and jumbo reachability",
    "addressing: rail addresses, subnets and ARP/rp_filter sysctls",
    "ipv6: IPv6 off and RoCE v2 GIDs",
    "nccl_env: the effective NCCL environment",
    "bandwidth: RDMA loopback, rail and pair bandwidth",
    "tcp: iperf3 parallel-stream bandwidth",
    "nccl: NCCL all-reduce bus bandwidth",
    "soak: heat soak with GPU load, watching per-lane error rates",
    "switch: the switch's configuration",
    "qos: host PFC/trust read with mlnx_qos, agreeing with peers and switch",
    "sparkfabric_needs(*needs): what the check runs on the nodes, for the preflight "
    "(commands, 'a|b' for either, nccl.launcher, soak.gpu_load, 'sudo ethtool -m')",
)


PARAMETRISED = ("node", "rail", "link", "rail_link", "node_pair")


def _session(config: pytest.Config) -> SparkSession:
    s = get_session(config)
    assert s is not None
    return s


Params = dict[str, tuple[list[Any], list[str]]]
PARAMS_KEY = pytest.StashKey[Params]()


def parameters(c: Cluster, plan: Plan) -> Params:
    """Each plugin fixture's values and ids; bandwidth items follow the schedule
    (bandwidth.schedule): the pairs it measures."""
    measured = bwplan.measured_pairs(plan, bwplan.build(c, plan))
    bw_links = [link for pair in measured for link in pair.links]
    directed = list(bwplan.directed_links(c, plan))
    return {
        "_sf_node": (list(c.nodes), [n.name for n in c.nodes]),
        "_sf_rail": (list(c.rails), [r.id for r in c.rails]),
        "_sf_link": (directed, [d.id for d in directed]),
        "_sf_rail_link": (bw_links, [link.id for link in bw_links]),
        "_sf_node_pair": (list(measured), [p.id for p in measured]),
    }


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    s = get_session(metafunc.config)
    if s is None:
        return
    # Worked out once per run, not per test function: at 64 nodes the schedule alone costs
    # tens of milliseconds, and the suite has some forty parametrized functions.
    params = metafunc.config.stash.get(PARAMS_KEY, None)
    if params is None:
        params = metafunc.config.stash[PARAMS_KEY] = parameters(s.cluster, s.plan)
    for name, (values, ids) in params.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, values, ids=ids, indirect=True)


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    """Modules of the shipped suite get ids relative to the suite itself (`test_mtu.py::...`),
    the same from any directory, install location and spelling of --cluster: pytest's own ids
    follow the rootdir, which moves with all three. The terminal, JUnit XML, the HTML report and
    the JSON results then name every item alike."""
    suite = _session(parent.config).suite
    try:
        rel = module_path.resolve().relative_to(suite.resolve())
    except ValueError:
        return None
    return pytest.Module.from_parent(parent, path=module_path, nodeid=rel.as_posix())


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    s = _session(config)
    # A check that cannot apply to this cluster is not collected (not a skip on every run).
    if s.cluster.spec.switch is None:
        off = [i for i in items if "switch" in getattr(i, "fixturenames", ())]
        if off:
            config.hook.pytest_deselected(items=off)
            items[:] = [i for i in items if i not in off]
    # The heat soak runs last: it is the longest, and a marginal cable it finds may leave the
    # link down for a few seconds afterwards, which must not be blamed on the next test.
    # The kernel log comes after that: one read at the end holds every traffic window's lines.
    items.sort(
        key=lambda item: (
            getattr(item, "originalname", "") == "test_kernel_log",
            item.get_closest_marker("soak") is not None,
        )
    )
    # With `--dist loadgroup`, one group keeps the session's shared measurements on one worker;
    # the user's own tests that use none of our fixtures stay free to spread.
    ours = {"fabric", "node_host", "cluster", "switch", *(f"_sf_{n}" for n in PARAMETRISED)}
    for item in items:
        if ours & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("sparkfabric"))
    if items and not any(i.nodeid == VERDICT_ID for i in items):
        verdict = VerdictItem.from_parent(session, name="verdict", nodeid=VERDICT_ID)
        verdict.add_marker(pytest.mark.xdist_group("sparkfabric"))
        items.append(verdict)


@pytest.fixture(scope="session", autouse=True)
def _sf_suite_properties(
    request: pytest.FixtureRequest, record_testsuite_property: Callable[[str, object], None]
) -> None:
    """The cluster under test in JUnit XML's suite properties; the verdict joins them at the end."""
    s = _session(request.config)
    c = s.cluster
    for name, value in (
        ("sparkfabric_cluster", str(c.source) if c.source else "cluster.yaml"),
        ("sparkfabric_topology", c.topology),
        ("sparkfabric_nodes", ",".join(n.name for n in c.nodes)),
        ("sparkfabric_transport", c.spec.transport),
        ("sparkfabric_mtu", str(c.mtu)),
        *(("sparkfabric_safety", line) for line in s.safety),
    ):
        record_testsuite_property(name, value)
    s.suite_property = record_testsuite_property


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest) -> Cluster:
    """The validated cluster.yaml (frozen): topology, nodes, rails, thresholds, ..."""
    return _session(request.config).cluster


@pytest.fixture
def _sf_node(request: pytest.FixtureRequest) -> Node:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def _sf_rail(request: pytest.FixtureRequest) -> Rail:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def _sf_link(request: pytest.FixtureRequest) -> DirectedLink:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def _sf_rail_link(request: pytest.FixtureRequest) -> Link:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def _sf_node_pair(request: pytest.FixtureRequest) -> NodePair:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def node(_sf_node: Node) -> Node:
    """Each node of the cluster (id: its name)."""
    return _sf_node


@pytest.fixture
def rail(_sf_rail: Rail) -> Rail:
    """Each fabric interface of each node: netdev, RoCE device, PCI address, planned address.

    Id `spark-1:rail0` (`spark-1:p0rail1` where a node has both ports cabled)."""
    return _sf_rail


@pytest.fixture
def link(_sf_link: DirectedLink) -> DirectedLink:
    """Each directed pair of rail interfaces that must reach each other (`a:rail0->b:rail0`)."""
    return _sf_link


@pytest.fixture
def rail_link(_sf_rail_link: Link) -> Link:
    """Each undirected rail link, for bandwidth between its two ends (`a:rail0<->b:rail0`)."""
    return _sf_rail_link


@pytest.fixture
def node_pair(_sf_node_pair: NodePair) -> NodePair:
    """Each pair of nodes joined by a cable or the switch, with its rail links (`a<->b`)."""
    return _sf_node_pair


@pytest.fixture(scope="session")
def switch(request: pytest.FixtureRequest) -> SwitchSpec:
    """The switch section of cluster.yaml; tests using it are not collected without one."""
    spec = _session(request.config).cluster.spec.switch
    assert spec is not None, "switch checks are deselected without a switch: section"
    return spec


@pytest.fixture(scope="session")
def fabric(request: pytest.FixtureRequest) -> Fabric:
    """The session's measurement engine: schedules, runs and caches every probe."""
    return _session(request.config).fabric


@pytest.fixture
def node_host(node: Node, fabric: Fabric) -> testinfra.host.Host:
    """A testinfra Host for the node, through our transport (every command has a deadline)."""
    from pytest_sparkfabric.transport.host import make_host

    return make_host(fabric.transport, node.name)


@pytest.fixture
def verdict(request: pytest.FixtureRequest) -> Verdict:
    """Records node/rail/measured/expected for the report; `verdict.fail(msg, rule)` fails
    with the diagnosis rule's cause and fix."""
    return Verdict(request.node)
