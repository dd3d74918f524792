"""Fixtures of the shipped suite, registered only when --cluster is given (one `Suite` per run).
Nouns are parametrised on private names (`_sf_node`) the public fixtures take: ids stay readable
and stable, and a user's own `node` (fixture or parametrize) shadows ours."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sparkfabric.measure import bwplan
from pytest_sparkfabric.session import VERDICT_ID, VerdictItem
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


Params = dict[str, tuple[list[Any], list[str]]]


def parameters(c: Cluster, plan: Plan) -> Params:
    """Each noun's values and ids; bandwidth items follow the schedule (bwplan): the pairs it
    measures."""
    measured = bwplan.measured_pairs(plan, bwplan.build(c, plan))
    values: dict[str, list[Any]] = {
        "_sf_node": list(c.nodes),
        "_sf_rail": list(c.rails),
        "_sf_link": list(bwplan.directed_links(c, plan)),
        "_sf_rail_link": [link for pair in measured for link in pair.links],
        "_sf_node_pair": list(measured),
    }
    return {k: (v, [getattr(x, "id", None) or x.name for x in v]) for k, v in values.items()}


class Suite:
    """The run's collection hooks and per-item fixtures, bound to its session (the session-scoped
    fixtures: `session_fixtures`).

    No fixture of ours takes `request`: pytest builds a new `request` fixture definition, with
    an inspect.signature call, each time a fixture that asks for it is looked up, in every item,
    session-scoped ones included (about a fifth of the 64-node suite's setup CPU)."""

    def __init__(self, session: SparkSession, suite: Path) -> None:
        self.s = session
        self.suite = suite.resolve()
        self._params: Params | None = None
        self._item: pytest.Item | None = None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        # Worked out once per run, not per test function: at 64 nodes the schedule alone costs
        # tens of milliseconds, and the suite has some forty parametrized functions.
        if self._params is None:
            self._params = parameters(self.s.cluster, self.s.plan)
        for name, (values, ids) in self._params.items():
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, values, ids=ids)

    def pytest_pycollect_makemodule(
        self, module_path: Path, parent: pytest.Collector
    ) -> pytest.Module | None:
        """Modules of the shipped suite get ids relative to the suite itself (`test_mtu.py::...`),
        the same from any directory, install location and spelling of --cluster: pytest's own
        ids follow the rootdir, which moves with all three. The terminal, JUnit XML, the HTML
        report and the JSON results then name every item alike."""
        try:
            rel = module_path.resolve().relative_to(self.suite)
        except ValueError:
            return None
        return pytest.Module.from_parent(parent, path=module_path, nodeid=rel.as_posix())

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        # A check that cannot apply to this cluster is not collected (not a skip on every run).
        if self.s.cluster.spec.switch is None:
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
        # With `--dist loadgroup`, one group keeps the session's shared measurements on one
        # worker; the user's own tests that use none of our fixtures stay free to spread.
        ours = {"fabric", "node_host", "cluster", "switch", *(self._params or {})}
        for item in items:
            if not ours.isdisjoint(getattr(item, "fixturenames", ())):
                item.add_marker(pytest.mark.xdist_group("sparkfabric"))
        if items and not any(i.nodeid == VERDICT_ID for i in items):
            verdict = VerdictItem.from_parent(session, name="verdict", nodeid=VERDICT_ID)
            verdict.add_marker(pytest.mark.xdist_group("sparkfabric"))
            items.append(verdict)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._item = item

    @pytest.fixture
    def node(self, _sf_node: Node) -> Node:
        """Each node of the cluster (id: its name)."""
        return _sf_node

    @pytest.fixture
    def rail(self, _sf_rail: Rail) -> Rail:
        """Each fabric interface of each node: netdev, RoCE device, PCI address, planned address.

        Id `spark-1:rail0` (`spark-1:p0rail1` where a node has both ports cabled)."""
        return _sf_rail

    @pytest.fixture
    def link(self, _sf_link: DirectedLink) -> DirectedLink:
        """Each directed pair of rail interfaces that must reach each other (`a:rail0->b:rail0`)."""
        return _sf_link

    @pytest.fixture
    def rail_link(self, _sf_rail_link: Link) -> Link:
        """Each undirected rail link, for bandwidth between its two ends (`a:rail0<->b:rail0`)."""
        return _sf_rail_link

    @pytest.fixture
    def node_pair(self, _sf_node_pair: NodePair) -> NodePair:
        """Each pair of nodes joined by a cable or the switch, with its rail links (`a<->b`)."""
        return _sf_node_pair

    @pytest.fixture
    def node_host(self, node: Node, fabric: Fabric) -> testinfra.host.Host:
        """A testinfra Host for the node, through our transport (every command has a deadline)."""
        from pytest_sparkfabric.transport.host import make_host

        return make_host(fabric.transport, node.name)

    @pytest.fixture
    def verdict(self) -> Verdict:
        """Records node/rail/measured/expected for the report; `verdict.fail(msg, rule)` fails
        with the diagnosis rule's cause and fix."""
        assert self._item is not None
        return Verdict(self._item)


def session_fixtures(s: SparkSession) -> ModuleType:
    """The session-scoped fixtures, closures over the run's session, in a plugin module of their
    own (pytest deprecates session-scoped fixtures on a plugin instance)."""

    @pytest.fixture(scope="session", autouse=True)
    def _sf_suite_properties(record_testsuite_property: Callable[[str, object], None]) -> None:
        """The cluster under test in JUnit XML's suite properties; the verdict joins them at the
        end."""
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
    def cluster() -> Cluster:
        """The validated cluster.yaml (frozen): topology, nodes, rails, thresholds, ..."""
        return s.cluster

    @pytest.fixture(scope="session")
    def switch() -> SwitchSpec:
        """The switch section of cluster.yaml; tests using it are not collected without one."""
        spec = s.cluster.spec.switch
        assert spec is not None, "switch checks are deselected without a switch: section"
        return spec

    @pytest.fixture(scope="session")
    def fabric() -> Fabric:
        """The session's measurement engine: schedules, runs and caches every probe."""
        return s.fabric

    module = ModuleType(f"{__name__}.session")
    module.__dict__.update(
        _sf_suite_properties=_sf_suite_properties, cluster=cluster, switch=switch, fabric=fabric
    )
    return module
